// Package manifest reads the orchestrators' inputs into audit models:
// compose files (through compose-go, as docker compose reads them, with
// the line of each key) and Kubernetes manifests (the workload kinds, their
// NetworkPolicies, and the Pod Security evaluator's verdict). It is the
// audit's loader for those kinds, apart from package audit so that the
// binary that launches sandboxes, which audits only its own OCI config,
// links neither compose-go nor k8s.io (README, "Three binaries"): agentbox
// audit, compose and kube, in agentbox-ext, pass LoadCompose and LoadKube
// to audit.LoadOptions.
package manifest
