package denials

import (
	enchex "encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbox/agentbox/ledger"
)

// Landlock's denials reach the kernel's audit subsystem (Linux 6.15,
// Landlock ABI 7): one AUDIT_LANDLOCK_ACCESS record per refused access,
// naming the domain that refused it, and, after a domain's first logged
// refusal, one AUDIT_LANDLOCK_DOMAIN record naming the process that
// created it. agentbox-init creates the agent's domains with
// LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON, without which the kernel logs
// nothing once the agent executes its program
// (Documentation/admin-guide/LSM/landlock.rst).

// The message types and the multicast group of linux/audit.h that the
// Landlock log uses.
const (
	auditGet            = 1000 // AUDIT_GET: the audit_status
	auditSet            = 1001 // AUDIT_SET
	auditSyscall        = 1300 // AUDIT_SYSCALL: the syscall of an event
	auditEOE            = 1320 // AUDIT_EOE: the end of a multi-record event
	auditLandlockAccess = 1423 // AUDIT_LANDLOCK_ACCESS: one denied access
	auditLandlockDomain = 1424 // AUDIT_LANDLOCK_DOMAIN: a domain allocated or freed
	auditNlgrpReadlog   = 1    // AUDIT_NLGRP_READLOG: a read-only copy of every record
	auditStatusEnabled  = 1    // AUDIT_STATUS_ENABLED, the mask bit of AUDIT_SET
)

// LandlockLogABI is the first Landlock ABI that reports denials to the
// audit subsystem.
const LandlockLogABI = 7

// auditFix is how a host turns kernel auditing on; agentbox does not.
const auditFix = "enable: auditctl -e 1, or boot with audit=1"

// LandlockOptions configure a LandlockWatch.
type LandlockOptions struct {
	// ABI is the kernel's Landlock ABI (selftest.LandlockABI).
	ABI int
	// OnDenial, when set, is called with each of the run's Landlock
	// denials once its audit event is complete, from the watch's
	// goroutine; it must not block for long.
	OnDenial func(ledger.Denial)
	// Max caps the denials kept; zero means DefaultMax.
	Max int
}

// LandlockWatch reads the kernel's Landlock audit records while a run
// lasts and keeps the run's: those of the domains its agent created.
type LandlockWatch struct {
	opts LandlockOptions
	off  string // why nothing is read; "" while reading
	r    *auditReader
	lost uint32 // the kernel's lost counter at the start

	stopR, stopW *os.File
	// started is closed once off, r, lost and the stop pipe are set
	// (start); done once reading has ended.
	started chan struct{}
	done    chan struct{}

	mu       sync.Mutex
	agent    int            // the agent's host pid: its domains are the run's
	sandbox  *nsID          // the sandbox's pid namespace, when it has its own
	domains  map[string]int // domain id: the host pid that created it
	ours     map[string]bool
	pending  map[string]*auditEvent // by serial, until its end
	list     []ledger.Denial
	dropped  int
	overflow int // ENOBUFS: records this reader missed
	errs     []error
	// heard is true once a record reached the socket: the kernel's note
	// of this reader's own bind, a Landlock record, any of them.
	heard bool
}

// WatchLandlock starts reading the Landlock audit records, or says why it
// cannot: no Landlock or an ABI that does not log, no audit subsystem,
// no CAP_AUDIT_READ, auditing disabled. It never changes the kernel's
// audit settings. The result is never nil; Stop gives the layer either way.
//
// It returns at once: the reader is opened and the audit status read on
// the watch's goroutine (the kernel answers each AUDIT_GET from a kernel
// thread it creates for that reply, 0.3 to 4 ms here, which the launch
// need not wait for). Every method waits for that start: the reader is
// bound to the records' group before AgentStarted returns, so before the
// agent may run.
func WatchLandlock(opts LandlockOptions) *LandlockWatch {
	w := newLandlockWatch(opts)
	if w.off = landlockUnreadable(opts.ABI); w.off != "" {
		close(w.started)
		close(w.done)
		return w
	}
	go func() {
		if w.start() {
			w.loop()
		}
	}()
	return w
}

// start opens the reader, then reads the kernel's lost counter (after the
// bind, so that a record lost later is counted), and reports whether the
// watch reads; either way it closes started, and done when it does not.
func (w *LandlockWatch) start() (reading bool) {
	defer close(w.started)
	r, err := openAuditReader()
	if err != nil {
		w.off = auditReaderError(err)
		close(w.done)
		return false
	}
	st, err := readAuditStatus()
	switch {
	case err != nil:
		w.off = "cannot tell whether kernel auditing is on (AUDIT_GET: " + err.Error() + ")"
	case st.Enabled == 0:
		w.off = "kernel audit is disabled (" + auditFix + ")"
	}
	if w.off == "" {
		w.stopR, w.stopW, err = os.Pipe()
		if err != nil {
			w.off = err.Error()
		}
	}
	if w.off != "" {
		r.close()
		close(w.done)
		return false
	}
	w.r, w.lost = r, st.Lost
	return true
}

func newLandlockWatch(opts LandlockOptions) *LandlockWatch {
	if opts.Max <= 0 {
		opts.Max = DefaultMax
	}
	return &LandlockWatch{opts: opts, started: make(chan struct{}), done: make(chan struct{}), domains: map[string]int{}, ours: map[string]bool{}, pending: map[string]*auditEvent{}}
}

// landlockUnreadable says why a kernel with Landlock ABI abi has no
// Landlock records, or "".
func landlockUnreadable(abi int) string {
	switch {
	case abi == 0:
		return "this kernel has no Landlock"
	case abi < LandlockLogABI:
		return fmt.Sprintf("the kernel's Landlock ABI is %d; Landlock reports denials to the audit log from ABI %d (Linux 6.15)", abi, LandlockLogABI)
	}
	return ""
}

func auditReaderError(err error) string {
	switch {
	case errors.Is(err, unix.EPROTONOSUPPORT), errors.Is(err, unix.EAFNOSUPPORT):
		return "this kernel has no audit subsystem (CONFIG_AUDIT), where Landlock reports denials"
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES), errors.Is(err, unix.ECONNREFUSED):
		return fmt.Sprintf("reading the kernel's audit records needs CAP_AUDIT_READ in the initial user namespace, which the launcher (uid %d) lacks (%v)", os.Geteuid(), err)
	}
	return "the kernel's audit records: " + err.Error()
}

// Unreadable is why this watch reads nothing, or "" when it reads.
func (w *LandlockWatch) Unreadable() string {
	<-w.started
	return w.off
}

// AgentStarted names the run's processes before the agent is handed the
// sandbox: agent is the host pid of the process that will create the
// agent's Landlock domains (init's child), init that of the sandbox's
// init, whose pid namespace holds every process of the run. A domain is
// the run's when agent created it, or when a process of that namespace
// created it or was refused by it.
func (w *LandlockWatch) AgentStarted(agent, init int) {
	<-w.started
	w.mu.Lock()
	defer w.mu.Unlock()
	w.agent = agent
	if init > 0 {
		if ns, ok := pidNS(init); ok {
			if self, ok := pidNS(os.Getpid()); !ok || self != ns {
				w.sandbox = &ns
			}
		}
	}
}

// nsID names a namespace: the device and inode of its /proc/PID/ns file.
type nsID struct{ dev, ino uint64 }

func pidNS(pid int) (nsID, bool) {
	var st unix.Stat_t
	if unix.Stat("/proc/"+strconv.Itoa(pid)+"/ns/pid", &st) != nil {
		return nsID{}, false
	}
	return nsID{uint64(st.Dev), st.Ino}, true
}

// inSandbox reports whether host pid is, now, a process of the sandbox.
func (w *LandlockWatch) inSandbox(pid int) bool {
	if w.sandbox == nil || pid <= 0 {
		return false
	}
	ns, ok := pidNS(pid)
	return ok && ns == *w.sandbox
}

// Stop ends the reading, gives the events still open their end, and
// returns what was kept: the denials in the order their events ended, and
// the landlock layer of the record.
func (w *LandlockWatch) Stop() Log {
	layer := ledger.DenialLayer{Layer: ledger.LayerLandlock}
	<-w.started
	if w.off != "" {
		layer.Detail = w.off
		return Log{Layer: layer}
	}
	w.stopW.Close()
	<-w.done
	w.stopR.Close()
	w.r.close()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flush()
	layer.Logged, layer.Dropped = true, w.dropped
	if !w.heard {
		// The kernel notes every bind to the group (AUDIT_EVENT_LISTENER)
		// as a record, which this reader receives too: none at all means
		// the records do not reach this socket (the kernel multicasts to
		// the initial network namespace only).
		layer.Logged = false
		layer.Detail = "no audit record reached the launcher during the run, not even the kernel's note of its own bind: the kernel sends them to the initial network namespace only"
		return Log{Layer: layer}
	}
	var notes []string
	if w.overflow > 0 {
		notes = append(notes, fmt.Sprintf("%d audit record(s) overflowed the launcher's socket and are missing", w.overflow))
	}
	if st, err := readAuditStatus(); err == nil {
		if st.Enabled == 0 {
			notes = append(notes, "kernel auditing was turned off during the run; denials after that are missing")
		}
		if st.Lost != w.lost {
			notes = append(notes, fmt.Sprintf("the kernel lost %d audit record(s) during the run (rate or backlog limit), some may have been this run's", st.Lost-w.lost))
		}
	}
	for _, err := range w.errs {
		notes = append(notes, err.Error())
	}
	layer.Detail = strings.Join(notes, "; ")
	return Log{Denials: slices.Clone(w.list), Layer: layer}
}

// drainQuiet and drainMax bound the wait at Stop for the records the
// kernel has queued but not yet sent: the kernel's audit thread delivers
// them in order, within milliseconds; reading ends once none came for
// drainQuiet, or after drainMax.
const (
	drainQuiet = 150 * time.Millisecond
	drainMax   = 2 * time.Second
)

func (w *LandlockWatch) loop() {
	defer close(w.done)
	buf := make([]byte, 1<<16)
	stop := w.stopR
	var deadline time.Time
	for {
		rec, err := w.r.read(buf, stop, drainQuiet)
		switch {
		case errors.Is(err, errStopped) && stop != nil:
			stop, deadline = nil, time.Now().Add(drainMax) // drain what is queued
			continue
		case errors.Is(err, errStopped):
			return
		case errors.Is(err, unix.ENOBUFS):
			w.mu.Lock()
			w.overflow++
			w.mu.Unlock()
			continue
		case err != nil:
			w.mu.Lock()
			w.errs = append(w.errs, fmt.Errorf("reading the audit records stopped: %w", err))
			w.mu.Unlock()
			return
		}
		w.add(rec)
		if stop == nil && time.Now().After(deadline) {
			return
		}
	}
}

// maxPending bounds the events waiting for their end: an event without an
// AUDIT_EOE (a record emitted outside a syscall) ends when it is pushed
// out, or at Stop.
const maxPending = 256

// add files one record under its event and ends the event at its EOE.
func (w *LandlockWatch) add(rec auditRecord) {
	w.mu.Lock()
	w.heard = true
	w.mu.Unlock()
	switch rec.Type {
	case auditLandlockAccess, auditLandlockDomain, auditSyscall, auditEOE:
	default:
		return
	}
	r, ok := parseRecord(rec.Text)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if rec.Type == auditLandlockDomain {
		w.domain(r.fields)
		return
	}
	ev := w.pending[r.serial]
	if ev == nil {
		if rec.Type != auditLandlockAccess {
			return // the syscall or the end of an event without a Landlock refusal
		}
		ev = &auditEvent{time: r.time}
		w.pending[r.serial] = ev
	}
	switch rec.Type {
	case auditLandlockAccess:
		ev.access = append(ev.access, r.fields)
	case auditSyscall:
		ev.pid, _ = strconv.Atoi(r.fields.get("pid"))
		ev.comm = r.fields.get("comm")
		ev.inSandbox = w.inSandbox(ev.pid)
	case auditEOE:
		w.finish(r.serial)
		return
	}
	if len(w.pending) > maxPending {
		oldest := slices.MinFunc(slices.Collect(maps.Keys(w.pending)), compareSerial)
		w.finish(oldest)
	}
}

// flush ends every event still open, oldest first.
func (w *LandlockWatch) flush() {
	for _, serial := range slices.SortedFunc(maps.Keys(w.pending), compareSerial) {
		w.finish(serial)
	}
}

// domain learns who created a domain from its "allocated" record.
func (w *LandlockWatch) domain(f fields) {
	id := f.get("domain")
	if f.get("status") != "allocated" || id == "" {
		return
	}
	pid, _ := strconv.Atoi(f.get("pid"))
	w.domains[id] = pid
	if (w.agent > 0 && pid == w.agent) || w.inSandbox(pid) {
		w.ours[id] = true
	}
}

// finish ends the event of serial: each access refused by one of the
// run's domains is a denial.
func (w *LandlockWatch) finish(serial string) {
	ev := w.pending[serial]
	delete(w.pending, serial)
	if ev == nil {
		return
	}
	for _, a := range ev.access {
		id := a.get("domain")
		if !w.ours[id] && ev.inSandbox {
			w.ours[id] = true // a domain the agent's own sandbox nested in it
		}
		if !w.ours[id] {
			continue
		}
		d := landlockDenial(ev, a)
		if len(w.list) >= w.opts.Max {
			w.dropped++
			continue
		}
		w.list = append(w.list, d)
		if w.opts.OnDenial != nil {
			w.opts.OnDenial(d)
		}
	}
}

// auditEvent is the records of one audit event (one serial) so far.
type auditEvent struct {
	time      time.Time
	access    []fields
	pid       int
	comm      string
	inSandbox bool
}

// objectFields are the fields of an AUDIT_LANDLOCK_ACCESS record that name
// what was refused, in the order a summary shows them; dev and ino are
// left out.
var objectFields = []string{"path", "name", "daddr", "dest", "saddr", "src", "opid", "ocomm", "tpid"}

// landlockDenial is one refused access of an event.
func landlockDenial(ev *auditEvent, a fields) ledger.Denial {
	var args []string
	for _, k := range objectFields {
		if v, ok := a.lookup(k); ok {
			args = append(args, k+"="+v)
		}
	}
	return ledger.Denial{Time: ev.time, Layer: ledger.LayerLandlock, Syscall: a.get("blockers"), PID: ev.pid, Comm: ev.comm, Args: strings.Join(args, " ")}
}

// record is one parsed audit record.
type record struct {
	time   time.Time
	serial string
	fields fields
}

// fields are a record's key=value pairs in order.
type fields [][2]string

func (f fields) lookup(k string) (string, bool) {
	for _, kv := range f {
		if kv[0] == k {
			return kv[1], true
		}
	}
	return "", false
}

func (f fields) get(k string) string { v, _ := f.lookup(k); return v }

// parseRecord reads a record's text: "audit(SECONDS.MILLIS:SERIAL): "
// then key=value pairs, a value either "quoted" or bare. A bare value of
// a field that carries an untrusted string (path, comm, exe, …) is the
// hex of a string that holds a quote, a space or a control character
// (audit_log_untrustedstring), and is decoded.
func parseRecord(text string) (record, bool) {
	rest, ok := strings.CutPrefix(text, "audit(")
	if !ok {
		return record{}, false
	}
	stamp, rest, ok := strings.Cut(rest, "): ")
	if !ok {
		stamp, ok = strings.CutSuffix(rest, "):")
		if !ok {
			return record{}, false
		}
		rest = ""
	}
	when, serial, ok := strings.Cut(stamp, ":")
	if !ok {
		return record{}, false
	}
	sec, ms, _ := strings.Cut(when, ".")
	s, err1 := strconv.ParseInt(sec, 10, 64)
	m, err2 := strconv.ParseInt(ms, 10, 64)
	if err1 != nil || err2 != nil || serial == "" {
		return record{}, false
	}
	r := record{time: time.Unix(s, m*int64(time.Millisecond)).UTC(), serial: serial}
	for rest = strings.TrimLeft(rest, " "); rest != ""; rest = strings.TrimLeft(rest, " ") {
		k, v, ok := strings.Cut(rest, "=")
		if !ok || strings.ContainsRune(k, ' ') {
			break
		}
		rest = v
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				return record{}, false
			}
			v, rest = rest[1:1+end], rest[2+end:]
		} else {
			v, rest, _ = strings.Cut(rest, " ")
			if untrusted[k] {
				if b, err := enchex.DecodeString(v); err == nil && len(v) > 0 {
					v = string(b)
				}
			}
		}
		r.fields = append(r.fields, [2]string{k, v})
	}
	return r, true
}

// untrusted are the fields the kernel logs with audit_log_untrustedstring.
var untrusted = map[string]bool{"path": true, "name": true, "comm": true, "exe": true, "ocomm": true, "proctitle": true}

// compareSerial orders serials as numbers.
func compareSerial(a, b string) int {
	x, _ := strconv.ParseUint(a, 10, 64)
	y, _ := strconv.ParseUint(b, 10, 64)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
