SELECT id, orders FROM customers WHERE email = 'cy@example.com';
SELECT customer_id, SUM(total) FROM orders GROUP BY customer_id;
