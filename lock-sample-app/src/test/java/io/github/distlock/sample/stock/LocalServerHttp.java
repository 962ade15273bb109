package io.github.distlock.sample.stock;

import org.springframework.http.client.ClientHttpResponse;
import org.springframework.web.client.DefaultResponseErrorHandler;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.util.DefaultUriBuilderFactory;

/**
 * A client of the test's own server that returns 4xx and 5xx answers instead of throwing
 * them, so a test can assert on a 409 or a 503 as on a 200. Spring Framework's
 * {@link RestTemplate} rather than Spring Boot's {@code TestRestTemplate}, because Boot 4
 * moved that one to another module and package: these tests do not depend on which Boot
 * line's test support is there.
 *
 * <pre>{@code
 * &#64;LocalServerPort
 * int port;
 *
 * ResponseEntity<String> response = LocalServerHttp.client(port).getForEntity("/stock/widget", String.class);
 * }</pre>
 */
public final class LocalServerHttp {

    private LocalServerHttp() {
    }

    public static RestTemplate client(int port) {
        RestTemplate http = new RestTemplate();
        http.setUriTemplateHandler(new DefaultUriBuilderFactory("http://localhost:" + port));
        http.setErrorHandler(new DefaultResponseErrorHandler() {
            @Override
            public boolean hasError(ClientHttpResponse response) {
                return false;
            }
        });
        return http;
    }

}
