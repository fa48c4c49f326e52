package dev.staunch.jdbc.boot;

import dev.staunch.jdbc.StaunchDataSource;
import dev.staunch.micrometer.StaunchMetrics;
import io.micrometer.core.instrument.binder.MeterBinder;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Version;
import java.math.BigDecimal;
import java.sql.SQLException;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * A small Spring Boot service as the incident's was: a DataSource from
 * spring.datasource.*, Flyway at start-up, JPA (Hibernate), a REST endpoint,
 * the actuator's health and metrics (the pool's, through a StaunchMetrics bean,
 * as the README says to declare it). SpringBootAppTest starts it on StaunchDataSource.
 */
@SpringBootApplication
@EnableJpaRepositories(considerNestedRepositories = true)
public class BootApp {

    @Entity(name = "note")
    public static class Note {
        @Id
        @GeneratedValue(strategy = GenerationType.IDENTITY)
        public Long id;
        public String text;
        @jakarta.persistence.Column(precision = 12, scale = 4)
        public BigDecimal amount;
        @Version
        public int version;
    }

    public interface Notes extends JpaRepository<Note, Long> {}

    /** The pool's meters (jdbc.connections.*, staunch.connections.*): Boot binds MeterBinder beans to its registry. */
    @Bean
    public MeterBinder staunchMetrics(DataSource dataSource) throws SQLException {
        return new StaunchMetrics(dataSource.unwrap(StaunchDataSource.class).pool());
    }

    public record NewNote(String text, BigDecimal amount) {}

    @RestController
    public static class NoteController {
        private final Notes notes;

        public NoteController(Notes notes) {
            this.notes = notes;
        }

        @GetMapping("/notes")
        public List<Note> all() {
            return notes.findAll();
        }

        @PostMapping("/notes")
        public Note add(@RequestBody NewNote in) {
            Note n = new Note();
            n.text = in.text();
            n.amount = in.amount();
            return notes.save(n);
        }
    }
}
