package vars

// ServerID names the server a set of global variables came from: its
// server_uuid where it has one (MySQL), else hostname:port (MariaDB has no
// server_uuid); "" when neither is known. Two targets with the same ID are
// one server reached twice, however their URLs differ.
func ServerID(v map[string]string) string {
	if u := v["server_uuid"]; u != "" {
		return "server_uuid " + u
	}
	if h, p := v["hostname"], v["port"]; h != "" && p != "" {
		return h + ":" + p
	}
	return ""
}

// SameServer says whether two sets of global variables come from the same
// server, and how that was told (see ServerID).
func SameServer(a, b map[string]string) (bool, string) {
	ia := ServerID(a)
	if ia == "" {
		return false, ""
	}
	return ia == ServerID(b), ia
}
