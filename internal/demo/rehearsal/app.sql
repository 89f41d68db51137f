-- A small application schema for the rehearsal example: customers,
-- orders with a foreign key, a trigger that keeps a count, and a view.
CREATE DATABASE app;
USE app;
CREATE TABLE customers (
  id     INT PRIMARY KEY,
  email  VARCHAR(64) NOT NULL,
  orders INT NOT NULL DEFAULT 0,
  KEY email_idx (email)
);
CREATE TABLE orders (
  id          INT PRIMARY KEY,
  customer_id INT NOT NULL,
  total       DECIMAL(10,2) NOT NULL,
  FOREIGN KEY (customer_id) REFERENCES customers(id)
);
CREATE TRIGGER count_orders AFTER INSERT ON orders FOR EACH ROW
  UPDATE customers SET orders = orders + 1 WHERE id = NEW.customer_id;
CREATE VIEW big_orders AS SELECT id, customer_id, total FROM orders WHERE total > 50;
INSERT INTO customers (id, email) VALUES
  (1, 'ada@example.com'), (2, 'bob@example.com'), (3, 'cy@example.com'),
  (4, 'di@example.com'), (5, 'ed@example.com');
INSERT INTO orders VALUES
  (1, 1, 12.50), (2, 1, 80.00), (3, 2, 45.10), (4, 3, 99.90),
  (5, 4, 7.25), (6, 5, 60.00), (7, 5, 15.00), (8, 2, 51.00);
