// Package kubernetes holds shakedown's Kubernetes manifests: an Indexed Job
// whose pods each drive one segment of a load, the plan in a ConfigMap and
// the passwords in a Secret; and the long-term baseline, a CronJob that
// runs one sweep a night against a saved baseline and fails its Job on
// the sweep's exit 3 (slower than the baseline), with its plan in a
// ConfigMap of its own. Its test decodes them strictly with the Kubernetes
// API types and parses the pods' command lines as the binary would.
// Nothing here is linked into the binary.
package kubernetes
