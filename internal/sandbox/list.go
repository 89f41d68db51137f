package sandbox

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Where says where a sandbox's server runs, as "sandbox up" prints it
// after the port: "" when the kernel places it.
func (i *Instance) Where() string {
	var parts []string
	p := i.Placement
	if p.CPUs != "" {
		parts = append(parts, "on CPUs "+p.CPUs)
	}
	if p.CPUQuota != 0 {
		parts = append(parts, "under a "+p.QuotaString()+" CPU quota (cgroup "+i.Cgroup+")")
	}
	if p.NUMA != "" {
		parts = append(parts, "with NUMA memory policy "+p.NUMA)
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}

// WriteList writes the sandboxes as the table "sandbox list" prints.
func WriteList(w io.Writer, all []*Instance) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tSERVER\tPORT\tCPUS\tQUOTA\tNUMA\tTARGET")
	for _, i := range all {
		status := "stopped"
		if i.Running {
			status = "running"
		}
		p := i.Placement
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", i.Name, status, i.Product(), i.ClientPort(),
			dash(p.CPUs), dash(p.QuotaString()), dash(p.NUMA), i.URL())
	}
	return tw.Flush()
}

// dash is s, or "-" for nothing.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Line is the sandbox in one line, as "sandbox up" prints it: its state,
// server, address (with the socket when socket) and target URL.
func (i *Instance) Line(state string, socket bool) string {
	addr := fmt.Sprintf("127.0.0.1:%d", i.ClientPort())
	switch {
	case i.GatePort != 0 && socket:
		addr += fmt.Sprintf(" (the server beneath on 127.0.0.1:%d, socket %s)", i.Port, i.Socket)
	case i.GatePort != 0:
		addr += fmt.Sprintf(" (the server beneath on 127.0.0.1:%d)", i.Port)
	case socket:
		addr += fmt.Sprintf(" (socket %s)", i.Socket)
	}
	return fmt.Sprintf("sandbox %s %s: %s on %s%s; target %s", i.Name, state, i.Product(), addr, i.Where(), i.URL())
}
