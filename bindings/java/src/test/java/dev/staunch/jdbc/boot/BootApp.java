package dev.staunch.jdbc.boot;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Version;
import java.math.BigDecimal;
import java.util.List;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * A small Spring Boot service as the incident's was: a DataSource from
 * spring.datasource.*, Flyway at start-up, JPA (Hibernate), a REST endpoint,
 * the actuator's health, metrics and Prometheus endpoint (the pool's meters with
 * nothing declared: staunch's auto-configuration binds them). SpringBootAppTest
 * starts it on StaunchDataSource.
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
