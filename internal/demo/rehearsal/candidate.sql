-- The app's tables as the DBA made them on the candidate beforehand: the
-- same columns and keys, but without the index on customers.email. The
-- copy (schema: existing) loads the rows into them and adds the view and
-- the trigger from the source.
CREATE DATABASE app;
USE app;
CREATE TABLE customers (
  id     INT PRIMARY KEY,
  email  VARCHAR(64) NOT NULL,
  orders INT NOT NULL DEFAULT 0
);
CREATE TABLE orders (
  id          INT PRIMARY KEY,
  customer_id INT NOT NULL,
  total       DECIMAL(10,2) NOT NULL,
  FOREIGN KEY (customer_id) REFERENCES customers(id)
);
