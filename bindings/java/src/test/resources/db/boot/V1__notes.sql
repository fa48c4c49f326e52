CREATE TABLE note (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  text VARCHAR(200) NOT NULL,
  amount DECIMAL(12,4),
  version INT NOT NULL DEFAULT 0
);
INSERT INTO note (text, amount) VALUES ('migrated by Flyway', 1.2500);
