// Package kubernetes holds shakedown's Kubernetes manifests: an Indexed Job
// whose pods each drive one segment of a load, the plan in a ConfigMap and
// the passwords in a Secret. Its test decodes them strictly with the
// Kubernetes API types and parses the runners' command lines as the binary
// would. Nothing here is linked into the binary.
package kubernetes
