package sandbox

import (
	"reflect"
	"testing"
)

func TestDifferences(t *testing.T) {
	inst := &Instance{Port: 3307, Basedir: "/opt/mariadb", Settings: []string{"max_connections=5000", "innodb_buffer_pool_size=256M", "log_bin=OFF"}}
	tests := []struct {
		name    string
		port    int
		set     []string
		basedir string
		want    []string
	}{
		{"nothing asked", 0, nil, "", nil},
		{"the same, spelled otherwise", 3307, []string{"innodb-buffer-pool-size=256m", "log_bin=0"}, "/opt/mariadb/", nil},
		{"last value wins", 0, []string{"max_connections=10", "max_connections=5000"}, "", nil},
		{"another port", 3308, nil, "", []string{"--port 3308 (it runs on 127.0.0.1:3307)"}},
		{"another value", 0, []string{"innodb_buffer_pool_size=1G"}, "", []string{"--set innodb_buffer_pool_size=1G (it has innodb_buffer_pool_size=256M)"}},
		{"binary log on", 0, []string{"log_bin=ON"}, "", []string{"--set log_bin=ON (it has log_bin=OFF)"}},
		{"a setting it was not given", 0, []string{"sync_binlog=0"}, "", []string{"--set sync_binlog=0 (it has the server's default)"}},
		{"another server", 0, nil, "/opt/mysql", []string{"--basedir /opt/mysql (it runs /opt/mariadb)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := inst.Differences(tc.port, tc.set, tc.basedir)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := inst.Differences(0, []string{"port=1"}, ""); err == nil {
		t.Error("--set port=1: got no error, want one")
	}
}
