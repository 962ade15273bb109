package io.github.distlock.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * A throw-away certificate authority and a server certificate it signed, as PEM files,
 * for TLS tests: the server certificate is valid for {@code 127.0.0.1} and
 * {@code localhost}, so clients can verify the host name too.
 *
 * <pre>{@code
 * try (TlsCertificates certificates = TlsCertificates.generate();
 *         RedisTestServer redis = RedisTestServer.builder().tls(certificates).start()) {
 *     // spring.ssl.bundle.pem.redis.truststore.certificate=file:<certificates.caCertificate()>
 * }
 * }</pre>
 *
 * <p>
 * Generated at test time with the JDK's own {@code keytool} (no {@code openssl}, nothing
 * downloaded), with EC P-256 keys, which are quick to make. The keys never leave the
 * temporary directory, which {@link #close()} deletes.
 */
public final class TlsCertificates implements AutoCloseable {

    private static final String STORE_PASSWORD = "test-only";

    private static final Duration KEYTOOL_TIMEOUT = Duration.ofSeconds(30);

    private final Path directory;

    private TlsCertificates(Path directory) {
        this.directory = directory;
    }

    /**
     * Generates a CA and a server certificate for {@code 127.0.0.1} and
     * {@code localhost}, valid for two days, in a new temporary directory.
     * @return the certificates; close to delete them
     * @throws IllegalStateException when {@code keytool} fails
     */
    public static TlsCertificates generate() {
        Path directory;
        try {
            directory = Files.createTempDirectory("redis-tls-");
        }
        catch (IOException e) {
            throw new UncheckedIOException("could not create a directory for test certificates", e);
        }
        TlsCertificates certificates = new TlsCertificates(directory);
        try {
            certificates.create();
            return certificates;
        }
        catch (RuntimeException e) {
            certificates.close();
            throw e;
        }
    }

    private void create() {
        String ca = directory.resolve("ca.p12").toString();
        String server = directory.resolve("server.p12").toString();
        String csr = directory.resolve("server.csr").toString();
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2", "-dname",
                "CN=lock-test-support CA", "-ext", "bc:c", "-keystore", ca);
        keytool("-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
                "-dname", "CN=localhost", "-keystore", server);
        keytool("-certreq", "-alias", "server", "-keystore", server, "-file", csr);
        keytool("-gencert", "-rfc", "-alias", "ca", "-keystore", ca, "-infile", csr, "-validity", "2", "-outfile",
                serverCertificate().toString(), "-ext", "san=ip:127.0.0.1,dns:localhost", "-ext",
                "ku:c=digitalSignature,keyAgreement", "-ext", "eku=serverAuth");
        // A client certificate too, for servers that ask clients for one (etcd's
        // --client-cert-auth).
        String client = directory.resolve("client.p12").toString();
        String clientCsr = directory.resolve("client.csr").toString();
        keytool("-genkeypair", "-alias", "client", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
                "-dname", "CN=lock-test-support client", "-keystore", client);
        keytool("-certreq", "-alias", "client", "-keystore", client, "-file", clientCsr);
        keytool("-gencert", "-rfc", "-alias", "ca", "-keystore", ca, "-infile", clientCsr, "-validity", "2", "-outfile",
                clientCertificate().toString(), "-ext", "ku:c=digitalSignature,keyAgreement", "-ext", "eku=clientAuth");
        writeCaCertificate(Path.of(ca), caCertificate());
        writePrivateKey(Path.of(server), "server", serverKey());
        writePrivateKey(Path.of(client), "client", clientKey());
    }

    /**
     * A client certificate signed by the CA, for servers that ask clients for one.
     * @return a PEM file
     */
    public Path clientCertificate() {
        return directory.resolve("client.crt");
    }

    /**
     * The client certificate's private key, unencrypted PKCS#8.
     * @return a PEM file
     */
    public Path clientKey() {
        return directory.resolve("client.key");
    }

    /**
     * The CA certificate, the one clients trust (Redis's {@code tls-ca-cert-file}).
     * @return a PEM file
     */
    public Path caCertificate() {
        return directory.resolve("ca.crt");
    }

    /**
     * The server certificate, signed by the CA (Redis's {@code tls-cert-file}).
     * @return a PEM file
     */
    public Path serverCertificate() {
        return directory.resolve("server.crt");
    }

    /**
     * The server's private key, unencrypted PKCS#8 (Redis's {@code tls-key-file}).
     * @return a PEM file
     */
    public Path serverKey() {
        return directory.resolve("server.key");
    }

    /**
     * A socket factory that trusts only the CA, for the fixture's own connections to a
     * TLS server.
     * @return the factory
     */
    public SSLSocketFactory socketFactory() {
        return sslContext().getSocketFactory();
    }

    /**
     * A TLS context that trusts only the CA, for a client that takes one (the JDK's HTTP
     * client).
     * @return the context
     */
    public SSLContext sslContext() {
        try {
            TrustManagerFactory trustManagers = TrustManagerFactory
                .getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trustManagers.init(caTrustStore());
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trustManagers.getTrustManagers(), null);
            return context;
        }
        catch (GeneralSecurityException e) {
            throw new IllegalStateException("could not build a trust store from " + caCertificate(), e);
        }
    }

    /**
     * A TLS context that trusts only the CA and presents the client certificate, for
     * servers that ask clients for one.
     * @return the context
     */
    public SSLContext clientSslContext() {
        try {
            // The keystore keytool made still holds the key's self-signed certificate:
            // pair the key with the one the CA signed.
            char[] password = STORE_PASSWORD.toCharArray();
            Key key = load(directory.resolve("client.p12")).getKey("client", password);
            KeyStore identity = KeyStore.getInstance("PKCS12");
            identity.load(null, null);
            identity.setKeyEntry("client", key, password,
                    new Certificate[] { readCertificate(clientCertificate()), readCertificate(caCertificate()) });
            KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keyManagers.init(identity, password);
            TrustManagerFactory trustManagers = TrustManagerFactory
                .getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trustManagers.init(caTrustStore());
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keyManagers.getKeyManagers(), trustManagers.getTrustManagers(), null);
            return context;
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        catch (GeneralSecurityException e) {
            throw new IllegalStateException("could not build a client TLS context from " + directory, e);
        }
    }

    private KeyStore caTrustStore() throws GeneralSecurityException {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        try {
            trust.load(null, null);
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        trust.setCertificateEntry("ca", readCertificate(caCertificate()));
        return trust;
    }

    private static Certificate readCertificate(Path pem) throws GeneralSecurityException {
        try (InputStream in = Files.newInputStream(pem)) {
            return CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
        catch (IOException e) {
            throw new UncheckedIOException("could not read " + pem, e);
        }
    }

    /** Deletes the files; idempotent. */
    @Override
    public void close() {
        LiveRedisProcesses.deleteRecursively(directory);
    }

    /** Exported here rather than with one more keytool run: each one starts a JVM. */
    private static void writeCaCertificate(Path keyStore, Path pem) {
        try {
            writePem(pem, "CERTIFICATE", load(keyStore).getCertificate("ca").getEncoded());
        }
        catch (GeneralSecurityException e) {
            throw new IllegalStateException("could not export the CA certificate of " + keyStore, e);
        }
    }

    private static void writePrivateKey(Path keyStore, String alias, Path pem) {
        try {
            Key key = load(keyStore).getKey(alias, STORE_PASSWORD.toCharArray());
            writePem(pem, "PRIVATE KEY", key.getEncoded()); // PKCS#8, which OpenSSL reads
                                                            // as "PRIVATE KEY"
        }
        catch (GeneralSecurityException e) {
            throw new IllegalStateException("could not export the key of " + keyStore, e);
        }
    }

    private static KeyStore load(Path keyStore) throws GeneralSecurityException {
        try (InputStream in = Files.newInputStream(keyStore)) {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(in, STORE_PASSWORD.toCharArray());
            return store;
        }
        catch (IOException e) {
            throw new UncheckedIOException("could not read " + keyStore, e);
        }
    }

    private static void writePem(Path file, String type, byte[] der) {
        String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
        try {
            Files.writeString(file, "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n",
                    StandardCharsets.US_ASCII);
        }
        catch (IOException e) {
            throw new UncheckedIOException("could not write " + file, e);
        }
    }

    private void keytool(String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        // A short-lived JVM each: skip the optimizing compiler, which only costs start-up
        // time here.
        command.addAll(List.of("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"));
        command.addAll(List.of(args));
        command.addAll(
                List.of("-storetype", "PKCS12", "-storepass", STORE_PASSWORD, "-keypass", STORE_PASSWORD, "-noprompt"));
        try {
            Path output = directory.resolve("keytool.log");
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile()))
                .start();
            if (!process.waitFor(KEYTOOL_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("keytool did not finish within " + KEYTOOL_TIMEOUT + ": " + command);
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException("keytool failed (exit " + process.exitValue() + "): "
                        + String.join(" ", command) + "\n" + Files.readString(output));
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException("could not run " + command.get(0), e);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running keytool", e);
        }
    }

    /**
     * The directory, for assertion messages.
     * @return e.g. {@code TlsCertificates[/tmp/redis-tls-123]}
     */
    @Override
    public String toString() {
        return "TlsCertificates[" + directory + "]";
    }

}
