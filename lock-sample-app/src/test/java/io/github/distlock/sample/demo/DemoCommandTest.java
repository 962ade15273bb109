package io.github.distlock.sample.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Which demos the command line selects, and the table they print. */
class DemoCommandTest {

    @Test
    void bareDemoOptionSelectsAllFiveInOrder() {
        assertThat(DemoCommand.selected(new String[] { "--demo", "--sample.demo.requests=10" }))
            .containsExactly("oversell", "hot-item", "paused-holder", "failover", "scheduled");
        assertThat(DemoCommand.requested(new String[] { "--demo" })).isTrue();
    }

    @Test
    void namedDemoSelectsOnlyThatOne() {
        assertThat(DemoCommand.selected(new String[] { "--demo=paused-holder" })).containsExactly("paused-holder");
        assertThat(DemoCommand.requested(new String[] { "--demo=failover" })).isTrue();
        assertThat(DemoCommand.requested(new String[] { "--demonstrate", "--server.port=0" })).isFalse();
    }

    @Test
    void unknownNameFailsWithTheListOfNames() {
        assertThatThrownBy(() -> DemoCommand.selected(new String[] { "--demo=hotitem" }))
            .hasMessageContaining("Unknown demo 'hotitem'")
            .hasMessageContaining("oversell, hot-item, paused-holder, failover, scheduled");

        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        int status = DemoCommand.run(new String[] { "--demo=hotitem" },
                new PrintStream(printed, true, StandardCharsets.UTF_8));

        assertThat(status).isEqualTo(2);
        assertThat(printed.toString(StandardCharsets.UTF_8)).contains("Unknown demo 'hotitem'", "--demo=<name>");
    }

    @Test
    void tableAlignsColumnsAndMarksNumericOnesRightAligned() {
        DemoTable table = new DemoTable().left("mode").right("sold");
        table.row("guarded", 100).row("x", 7);

        List<String> lines = table.toString().lines().toList();

        assertThat(lines).containsExactly("| mode    | sold |", "|---------|-----:|", "| guarded |  100 |",
                "| x       |    7 |");
        assertThatThrownBy(() -> table.row("too few")).hasMessageContaining("needs 2 cells");
    }

}
