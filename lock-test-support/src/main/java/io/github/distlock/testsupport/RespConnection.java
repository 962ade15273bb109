package io.github.distlock.testsupport;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * A minimal RESP connection to one Redis server: sends commands as arrays of bulk strings
 * and parses the five RESP2 reply types, and the RESP3 ones once a test switched the
 * connection with {@code HELLO 3}.
 *
 * <p>
 * It exists so that tests can run admin and inspection commands ({@code INFO},
 * {@code CONFIG RESETSTAT}, {@code PUBSUB NUMSUB}, {@code CLIENT LIST}, ...) against the
 * server under test without a second Redis client library, whose connection pooling,
 * retries and reconnects would get in the way of fault-injection tests.
 *
 * <p>
 * Replies are mapped as follows: simple string &rarr; {@link String}; integer &rarr;
 * {@link Long}; bulk string &rarr; {@link String} (UTF-8) or {@code null}; array &rarr;
 * {@link List} of these or {@code null}. A top-level error reply is thrown as
 * {@link RedisErrorReplyException}; an error nested in an array is returned as one.
 * RESP3: null &rarr; {@code null}; double &rarr; {@link Double}; boolean &rarr;
 * {@link Boolean}; big number &rarr; {@link java.math.BigInteger}; verbatim string &rarr;
 * its text without the format prefix; blob error as an error; map &rarr; {@link Map}; set
 * &rarr; {@link Set}; push &rarr; {@link List}; attributes are skipped.
 *
 * <p>
 * Every read has a timeout, so a paused or hung server makes a test fail instead of
 * hanging the build. Not thread-safe: one connection per thread.
 */
public final class RespConnection implements AutoCloseable {

    private final Socket socket;

    private final InputStream in;

    private final OutputStream out;

    private RespConnection(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = new BufferedOutputStream(socket.getOutputStream());
    }

    /**
     * Opens a connection.
     * @param host the server host
     * @param port the server port
     * @param readTimeout how long one reply may take before
     * {@link java.net.SocketTimeoutException}; also used as the connect timeout
     * @return the open connection; close it when done
     * @throws IOException when the server cannot be reached
     */
    public static RespConnection open(String host, int port, Duration readTimeout) throws IOException {
        int timeoutMillis = (int) Math.max(1, readTimeout.toMillis());
        Socket socket = new Socket();
        try {
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress(host, port), timeoutMillis);
            socket.setSoTimeout(timeoutMillis);
            return new RespConnection(socket);
        }
        catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    /**
     * Opens a TLS connection, checking that the server's certificate is valid for
     * {@code host} as an HTTPS client would, so that a test also notices a certificate a
     * real client would refuse.
     * @param host the server host
     * @param port the server's TLS port
     * @param readTimeout read timeout, also used as the connect and handshake timeout
     * @param tls creates the TLS socket, e.g. {@link TlsCertificates#socketFactory()}
     * @return the open connection, handshake done; close it when done
     * @throws IOException when the server cannot be reached or the handshake fails
     */
    public static RespConnection open(String host, int port, Duration readTimeout, SSLSocketFactory tls)
            throws IOException {
        int timeoutMillis = (int) Math.max(1, readTimeout.toMillis());
        Socket plain = new Socket();
        try {
            plain.setTcpNoDelay(true);
            plain.connect(new InetSocketAddress(host, port), timeoutMillis);
            plain.setSoTimeout(timeoutMillis);
            SSLSocket socket = (SSLSocket) tls.createSocket(plain, host, port, true);
            SSLParameters parameters = socket.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            socket.setSSLParameters(parameters);
            socket.startHandshake();
            return new RespConnection(socket);
        }
        catch (IOException | RuntimeException e) {
            plain.close();
            throw e;
        }
    }

    /**
     * Sends one command and reads its reply.
     * @param args the command name and its arguments, e.g.
     * {@code "SET", "k", "v", "PX", "1000"}
     * @return the reply, mapped as described in the class comment
     * @throws IOException when the server does not answer in time or the connection
     * breaks
     * @throws RedisErrorReplyException when Redis answers with an error
     */
    public Object command(String... args) throws IOException {
        send(args);
        return readReply();
    }

    /**
     * Sends one command without reading its reply, for commands whose replies arrive
     * later or never ({@code SUBSCRIBE}, {@code SHUTDOWN}), or to pipeline several
     * commands.
     * @param args the command name and its arguments
     * @throws IOException when writing fails
     */
    public void send(String... args) throws IOException {
        if (args.length == 0) {
            throw new IllegalArgumentException("a command needs at least its name");
        }
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        writeAscii(buffer, "*" + args.length + "\r\n");
        for (String arg : args) {
            byte[] bytes = Objects.requireNonNull(arg, "command arguments must not be null")
                .getBytes(StandardCharsets.UTF_8);
            writeAscii(buffer, "$" + bytes.length + "\r\n");
            buffer.write(bytes);
            writeAscii(buffer, "\r\n");
        }
        buffer.writeTo(out);
        out.flush();
    }

    /**
     * Reads the next reply, e.g. a pub/sub message after {@code SUBSCRIBE}.
     * @return the reply, mapped as described in the class comment
     * @throws IOException when nothing arrives within the read timeout or the connection
     * breaks
     * @throws RedisErrorReplyException when the reply is an error
     */
    public Object readReply() throws IOException {
        Object reply = readValue();
        if (reply instanceof RedisErrorReplyException error) {
            // Re-created so the stack trace points at the caller, not at the parser.
            throw new RedisErrorReplyException(error.getMessage());
        }
        return reply;
    }

    /**
     * Closes the socket; never throws, so it is safe in {@code finally} blocks and
     * try-with-resources.
     */
    @Override
    public void close() {
        try {
            socket.close();
        }
        catch (IOException ignored) {
            // Nothing useful to do: the server may already be gone, which is often the
            // point of the test.
        }
    }

    private Object readValue() throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new EOFException("connection closed by the server");
        }
        String line = readLine();
        switch (type) {
            case '+':
                return line;
            case '-':
                return new RedisErrorReplyException(line);
            case ':':
                return Long.parseLong(line);
            case '$': {
                byte[] data = readBulk(line);
                return data == null ? null : new String(data, StandardCharsets.UTF_8);
            }
            case '*':
            case '>': {
                int count = Integer.parseInt(line);
                return count < 0 ? null : readValues(count, new ArrayList<>(count));
            }
            case '_':
                return null;
            case ',':
                return parseDouble(line);
            case '#':
                return line.equals("t");
            case '(':
                return new BigInteger(line);
            case '!':
                return new RedisErrorReplyException(new String(readBulk(line), StandardCharsets.UTF_8));
            case '=':
                // A verbatim string starts with its format, e.g. "txt:"; callers want the
                // text.
                return new String(readBulk(line), StandardCharsets.UTF_8).substring(4);
            case '~':
                return readValues(Integer.parseInt(line), new LinkedHashSet<>());
            case '%': {
                Map<Object, Object> map = new LinkedHashMap<>();
                for (int i = Integer.parseInt(line); i > 0; i--) {
                    map.put(readValue(), readValue());
                }
                return map;
            }
            case '|':
                // Attributes are metadata about the value that follows (e.g. key
                // popularity); tests want the value.
                for (int i = 2 * Integer.parseInt(line); i > 0; i--) {
                    readValue();
                }
                return readValue();
            default:
                throw new IOException("not a RESP reply, type byte '" + (char) type + "' followed by: " + line);
        }
    }

    private byte[] readBulk(String lengthLine) throws IOException {
        int length = Integer.parseInt(lengthLine);
        if (length < 0) {
            return null;
        }
        byte[] data = in.readNBytes(length);
        if (data.length < length) {
            throw new EOFException("connection closed in the middle of a bulk string");
        }
        expectCrlf();
        return data;
    }

    private <C extends Collection<Object>> C readValues(int count, C values) throws IOException {
        for (int i = 0; i < count; i++) {
            values.add(readValue());
        }
        return values;
    }

    private static Double parseDouble(String line) {
        return switch (line) {
            case "inf" -> Double.POSITIVE_INFINITY;
            case "-inf" -> Double.NEGATIVE_INFINITY;
            case "nan" -> Double.NaN;
            default -> Double.parseDouble(line);
        };
    }

    private String readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("connection closed in the middle of a reply");
            }
            if (b == '\r') {
                int next = in.read();
                if (next != '\n') {
                    throw new IOException("malformed reply: CR not followed by LF");
                }
                return line.toString(StandardCharsets.UTF_8);
            }
            line.write(b);
        }
    }

    private void expectCrlf() throws IOException {
        if (in.read() != '\r' || in.read() != '\n') {
            throw new IOException("malformed reply: bulk string not terminated by CRLF");
        }
    }

    private static void writeAscii(ByteArrayOutputStream buffer, String text) {
        buffer.writeBytes(text.getBytes(StandardCharsets.US_ASCII));
    }

}
