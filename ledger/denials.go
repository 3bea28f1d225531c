package ledger

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The layers whose refusals a run's denial log holds.
const (
	LayerSeccomp  = "seccomp"
	LayerLandlock = "landlock"
	LayerGateway  = "gateway"
)

// Denial is one attempt a layer of the sandbox refused while the agent
// ran (docs/denials.md). Every string in it but Layer and Syscall is
// agent-controlled.
type Denial struct {
	Time  time.Time `json:"time"`
	Layer string    `json:"layer"` // LayerSeccomp, LayerLandlock or LayerGateway
	// Syscall is the refused syscall's name (seccomp), or the access
	// Landlock refused; empty for the gateway.
	Syscall string `json:"syscall,omitempty"`
	// PID is the caller's pid on the host; zero when unknown (the gateway).
	PID int `json:"pid,omitempty"`
	// Comm is the caller's command name (/proc/PID/comm), at most 16 bytes.
	Comm string `json:"comm,omitempty"`
	// Args summarises the arguments: "fstype=tmpfs target=/tmp" for a
	// mount, the target and reason for the gateway.
	Args string `json:"args,omitempty"`
}

// DenialLayer says whether one layer's refusals are in the denial log on
// this host, and counts what it saw.
type DenialLayer struct {
	Layer string `json:"layer"`
	// Logged is true when the layer's refusals were recorded for this run;
	// false: the log holds none of them, and Detail says why.
	Logged bool   `json:"logged"`
	Detail string `json:"detail,omitempty"`
	// Probes counts the refusals the self-test probes caused on purpose
	// before the agent started; they are not in the list.
	Probes int `json:"probes,omitempty"`
	// Dropped counts the agent's refusals beyond the log's cap.
	Dropped int `json:"dropped,omitempty"`
}

// DenialCount is the number of the agent's refusals a record holds, with
// those beyond the cap, for `agentbox runs`; "-" when no layer logged.
func (r Record) DenialCount() string {
	n, logged := len(r.Denials), false
	for _, l := range r.DenialLayers {
		n += l.Dropped
		logged = logged || l.Logged
	}
	if !logged {
		return "-"
	}
	return strconv.Itoa(n)
}

// String is the denial in one line, as `agentbox show` prints it.
func (d Denial) String() string {
	who := ""
	if d.PID != 0 {
		who = fmt.Sprintf("pid %d ", d.PID)
	}
	if d.Comm != "" {
		who += "(" + Printable(d.Comm) + ") "
	}
	if who != "" {
		who = strings.TrimSuffix(who, " ") + ": "
	}
	what := strings.TrimSpace(Printable(d.Syscall) + " " + Printable(d.Args))
	return fmt.Sprintf("%s  %-8s %s%s", d.Time.UTC().Format("15:04:05.000"), Printable(d.Layer), who, what)
}

// denials writes the layers' states and the agent's refusals.
func (p *printer) denials(layers []DenialLayer, ds []Denial) {
	if len(layers) == 0 {
		return
	}
	p.section(fmt.Sprintf("denials (%d)", len(ds)))
	for _, l := range layers {
		state := "logged"
		if !l.Logged {
			state = "not logged"
		}
		if l.Probes > 0 {
			state += fmt.Sprintf(", %d by the self-test probes (not listed)", l.Probes)
		}
		if l.Dropped > 0 {
			state += fmt.Sprintf(", %d more beyond the cap", l.Dropped)
		}
		if l.Detail != "" {
			state += ": " + l.Detail
		}
		p.line("  %-8s %s", l.Layer, state)
	}
	for _, d := range ds {
		p.line("  %s", safe(d.String()))
	}
}

// Denial writes one refusal while the run goes on.
func (e *Evidence) Denial(d Denial) {
	e.line(struct {
		Event  string `json:"event"`
		Denial Denial `json:"denial"`
	}{"denial", d})
}
