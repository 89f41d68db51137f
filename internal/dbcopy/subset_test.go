package dbcopy

import (
	"fmt"
	"strings"
	"testing"
)

// items adds products, order items (referencing orders and products) and
// notes on items to shop's schema.
func items(t *testing.T, p *pair) {
	t.Helper()
	mustExec(t, p.srcDB,
		"CREATE TABLE products (id INT PRIMARY KEY, title VARCHAR(40))",
		`CREATE TABLE items (order_id INT NOT NULL, line INT NOT NULL, product_id INT NOT NULL, PRIMARY KEY (order_id, line),
			CONSTRAINT fk_order FOREIGN KEY (order_id) REFERENCES orders (id),
			CONSTRAINT fk_product FOREIGN KEY (product_id) REFERENCES products (id))`,
		`CREATE TABLE item_notes (id INT PRIMARY KEY AUTO_INCREMENT, order_id INT NOT NULL, line INT NOT NULL, note TEXT,
			CONSTRAINT fk_item FOREIGN KEY (order_id, line) REFERENCES items (order_id, line))`)
	var prods, its, notes []string
	for i := 1; i <= 50; i++ {
		prods = append(prods, fmt.Sprintf("(%d, 'product %d')", i, i))
	}
	for o := 1; o <= 200; o++ {
		for l := 1; l <= 1+o%3; l++ {
			its = append(its, fmt.Sprintf("(%d, %d, %d)", o, l, 1+(o*7+l)%50))
			if l == 1 {
				notes = append(notes, fmt.Sprintf("(%d, %d, 'note')", o, l))
			}
		}
	}
	mustExec(t, p.srcDB, "INSERT INTO products VALUES "+strings.Join(prods, ","),
		"INSERT INTO items VALUES "+strings.Join(its, ","),
		"INSERT INTO item_notes (order_id, line, note) VALUES "+strings.Join(notes, ","))
}

// TestSubsetFollowsForeignKeys copies the orders chosen by --where with
// exactly the rows they reference and that reference them, to --fk-depth,
// and no dangling foreign key.
func TestSubsetFollowsForeignKeys(t *testing.T) {
	p := newPair(t)
	shop(t, p.srcDB, 60, 200)
	items(t, p)
	chosen := "o.id <= 20"
	want := map[string]string{ // what each table must hold, counted on the source
		"orders":    "SELECT COUNT(*) FROM orders o WHERE " + chosen,
		"items":     "SELECT COUNT(*) FROM items i JOIN orders o ON o.id = i.order_id WHERE " + chosen,
		"customers": "SELECT COUNT(DISTINCT o.customer_id) FROM orders o WHERE " + chosen,
		"products":  "SELECT COUNT(DISTINCT i.product_id) FROM items i JOIN orders o ON o.id = i.order_id WHERE " + chosen,
		"audit":     "SELECT COUNT(*) FROM audit",
	}
	dangling := []string{
		"SELECT COUNT(*) FROM orders o LEFT JOIN customers c ON c.id = o.customer_id WHERE c.id IS NULL",
		"SELECT COUNT(*) FROM items i LEFT JOIN orders o ON o.id = i.order_id WHERE o.id IS NULL",
		"SELECT COUNT(*) FROM items i LEFT JOIN products r ON r.id = i.product_id WHERE r.id IS NULL",
		"SELECT COUNT(*) FROM item_notes n LEFT JOIN items i ON i.order_id = n.order_id AND i.line = n.line WHERE i.order_id IS NULL",
	}
	cases := []struct {
		name  string
		depth int
		notes string // item_notes' rows: two levels below orders
	}{
		{"depth 1", 1, "SELECT 0"},
		{"depth 2", 2, "SELECT COUNT(*) FROM item_notes n JOIN orders o ON o.id = n.order_id WHERE " + chosen},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(testCtx(t), p.src, p.dst, Options{AllowWrite: true, Replace: true, Threads: 2, ChunkRows: 100,
				Where: map[string]string{"orders": "id <= 20"}, FKDepth: tc.depth, NoAnalyze: true})
			if err != nil {
				t.Fatalf("copy: %v", err)
			}
			if !res.Verify.Equal {
				t.Errorf("verify: got %+v, want equal", res.Verify)
			}
			w := map[string]string{"item_notes": tc.notes}
			for k, v := range want {
				w[k] = v
			}
			for table, q := range w {
				if got, want := count(t, p.dstDB, "SELECT COUNT(*) FROM "+table), count(t, p.srcDB, q); got != want {
					t.Errorf("%s rows on the target: got %d, want %d", table, got, want)
				}
			}
			for _, q := range dangling {
				if got := count(t, p.dstDB, q); got != 0 {
					t.Errorf("%s: got %d dangling rows, want 0", q, got)
				}
			}
		})
	}
}

// TestSampleFollowsForeignKeys samples the tables without a foreign key of
// their own (customers, audit); orders come with their sampled customers,
// and no customer beyond the sample is referenced.
func TestSampleFollowsForeignKeys(t *testing.T) {
	p := newPair(t)
	shop(t, p.srcDB, 60, 200)
	res, err := Run(testCtx(t), p.src, p.dst, Options{AllowWrite: true, Threads: 2, ChunkRows: 100, Sample: 0.5, NoAnalyze: true})
	if err != nil {
		t.Fatalf("copy: %v", err)
	}
	if !res.Verify.Equal {
		t.Errorf("verify: got %+v, want equal", res.Verify)
	}
	const chosen = "SELECT id FROM customers WHERE MOD(CRC32(CONCAT_WS(',', `id`)), 10000) < 5000"
	sampled := count(t, p.srcDB, "SELECT COUNT(*) FROM ("+chosen+") s")
	if sampled == 0 || sampled == 60 {
		t.Fatalf("the sample condition chose %d of 60 customers: the test proves nothing", sampled)
	}
	checks := []struct {
		name string
		q    string
		want int64
	}{
		{"customers: the sample", "SELECT COUNT(*) FROM customers", sampled},
		{"orders of sampled customers", "SELECT COUNT(*) FROM orders", count(t, p.srcDB, "SELECT COUNT(*) FROM orders WHERE customer_id IN ("+chosen+")")},
		{"dangling orders", "SELECT COUNT(*) FROM orders o LEFT JOIN customers c ON c.id = o.customer_id WHERE c.id IS NULL", 0},
	}
	for _, c := range checks {
		if got := count(t, p.dstDB, c.q); got != c.want {
			t.Errorf("%s: %s on the target: got %d, want %d", c.name, c.q, got, c.want)
		}
	}
}
