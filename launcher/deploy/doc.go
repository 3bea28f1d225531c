// Package deploy renders the plan for an orchestrator other than
// agentbox's own launch: a compose project (agentbox compose, and its
// --check of existing compose files) or Kubernetes manifests (agentbox
// kube), each audited before anything is written and recorded in the
// ledger. It sits beside package launcher, whose policy, plan, error kinds
// and ledger it uses, so that the launch binary links neither the
// renderers nor the compose and Kubernetes loaders: only agentbox-ext does
// (README, "Three binaries").
package deploy
