package io.github.distlock;

/**
 * Renders lock keys for log lines and exception messages. Keys often come from user input (a
 * {@code @DistributedLock} key expression over request parameters), so a key must never be able to
 * forge a log line: control characters, newlines among them, are escaped.
 *
 * <pre>{@code
 * log.info("Took lock " + LockKeys.printable(key));   // "order:42\nFAKE" prints as 'order:42\nFAKE'
 * }</pre>
 */
public final class LockKeys {

    private LockKeys() {
    }

    /**
     * The key in single quotes, with control characters written as escapes: {@code \n}, {@code \r},
     * {@code \t}, a backslash as {@code \\}, and any other control character (and the Unicode line
     * and paragraph separators) as {@code \}{@code uXXXX}.
     *
     * @param key the key as the application named it; {@code null} prints as {@code null}
     * @return the key, safe to put into a single log line
     */
    public static String printable(String key) {
        if (key == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder(key.length() + 2).append('\'');
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            switch (c) {
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
                        out.append(String.format("\\u%04x", (int) c));
                    }
                    else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('\'').toString();
    }
}
