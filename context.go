package memsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memsync/memsync/internal/agenthook"
	"github.com/memsync/memsync/internal/config"
)

// Defaults of an AgentContext.
const (
	// DefaultContextTimeout bounds a whole AgentContext: past it the hook
	// adds nothing and returns.
	DefaultContextTimeout = 200 * time.Millisecond
	// StartBudget and PromptBudget are the tokens of memory a session's
	// start and each prompt may add.
	StartBudget  = 800
	PromptBudget = 1500
)

// ContextOptions bound an AgentContext.
type ContextOptions struct {
	// Dir is where the agent works when its input names no cwd ("": the
	// working directory); a relative cwd is taken from it.
	Dir string
	// Timeout bounds the whole call, the wait for the memory's lock too;
	// DefaultContextTimeout when 0.
	Timeout time.Duration
}

// AgentContext answers a context hook of agent ("claude": Claude Code,
// "gemini": Gemini CLI),
// given the hook's standard input (the JSON the agent writes, read within
// the deadline): the JSON to print, nil for nothing to add.
//
// At a session's start it adds a digest, StartBudget tokens of the newest
// and most read entries; at each prompt, up to PromptBudget tokens of the
// entries the prompt matches, ranked as Inject ranks them. Both are
// Inject's memory block, framed as data. A session is never given an entry
// twice: a record per session in the memory's state dir (a resumed
// session keeps it; a new, cleared or compacted one starts afresh) says
// what it was given. Ranking is lexical: a model takes longer to load than
// a hook may run.
//
// It fails open: outside a git repository it adds nothing and says
// nothing; a damaged memory (any line that does not parse), a lock not had
// in time, bad input, running out of time or any other error adds nothing,
// and err says why in one line (the hook still exits 0). out, when not
// nil, is then what the agent reads as "nothing" (Gemini CLI reads the
// standard error as a message to the user when the output is empty).
func AgentContext(ctx context.Context, agent string, input io.Reader, o ContextOptions) (out []byte, err error) {
	defer func() {
		if err != nil {
			out = agenthook.Empty(agent)
		}
	}()
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultContextTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The work (the read of the input too) runs apart, so that the hook
	// returns by its deadline whatever the work waits for; claimed
	// decides, once, whether its result is given (and the session's record
	// updated) or dropped.
	var claimed atomic.Bool
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := agentContext(ctx, agent, input, o.Dir, timeout, &claimed)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-ctx.Done():
		if claimed.CompareAndSwap(false, true) {
			return nil, fmt.Errorf("gave up after %s: %w", timeout, ctx.Err())
		}
		r := <-done // the result is being given: one small write
		return r.out, r.err
	}
}

// agentContext is AgentContext's work; claimed is set (once) by whoever
// decides the result's fate.
func agentContext(ctx context.Context, agent string, input io.Reader, dir string, timeout time.Duration, claimed *atomic.Bool) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(input, agenthook.MaxInput+1))
	if err != nil {
		return nil, fmt.Errorf("reading the hook input: %w", err)
	}
	if len(data) > agenthook.MaxInput {
		return nil, fmt.Errorf("the hook input is over %d MiB", agenthook.MaxInput>>20)
	}
	in, err := agenthook.Parse(agent, data)
	if err != nil {
		return nil, err
	}
	if in.Cwd != "" && filepath.IsAbs(in.Cwd) {
		dir = in.Cwd
	} else if in.Cwd != "" {
		dir = filepath.Join(dir, in.Cwd)
	}
	var mu sync.Mutex
	var warned []string
	listening := false // Open's own warnings (a link put back) are no damage
	warn := func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		if listening {
			warned = append(warned, msg)
		}
	}
	m, err := Open(dir, Options{LockTimeout: timeout, Warn: warn, inHook: true})
	if errors.Is(err, ErrNoRepository) {
		return nil, nil // no memory here
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = m.Close() }()
	m.embedder = nil // lexical: see AgentContext
	if cfg := m.cfg; !cfg.Enabled || cfg.Mode() == config.None {
		return nil, nil
	}
	if in.Kind == agenthook.Prompt && in.Prompt == "" {
		return nil, nil
	}
	var rec *agenthook.Record
	sessions := agenthook.Sessions{Dir: filepath.Join(m.store.StateDir, "agent-sessions"), Perm: m.store.FilePerm(), DirPerm: m.store.DirPerm()}
	if in.Session != "" {
		if rec, err = sessions.Open(ctx, in, timeout); err != nil {
			return nil, fmt.Errorf("the session record: %w", err)
		}
		defer func() { _ = rec.Close() }()
		if rec.Full() {
			return nil, nil
		}
	}
	o := InjectOptions{Mode: string(config.Manual), skip: func(id string) bool { return rec != nil && rec.Has(id) }}
	prompt := in.Prompt
	if in.Kind == agenthook.Start {
		prompt = ""
		counts := m.store.AccessCounts()
		o.Budget, o.noTouch = new(StartBudget), true // chosen by use: counting it would choose it again
		o.use = func(id string) float64 { return math.Log1p(float64(counts[id])) }
	} else {
		o.Budget, o.matching = new(PromptBudget), true
	}
	mu.Lock()
	listening = true
	mu.Unlock()
	res, err := m.Inject(ctx, prompt, o)
	if err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warned) > 0 {
		return nil, errors.New(warned[0])
	}
	if len(res.Entries) == 0 {
		return nil, nil
	}
	// Past the deadline the result is dropped even when AgentContext has
	// not returned yet: what read the memory may have stopped waiting for
	// its lock.
	if ctx.Err() != nil || !claimed.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("gave up after %s: %w", timeout, context.DeadlineExceeded)
	}
	if rec != nil {
		ids := make([]string, len(res.Entries))
		for i, e := range res.Entries {
			ids[i] = e.ID
		}
		if err := rec.Add(sessions, ids...); err != nil {
			return nil, fmt.Errorf("the session record: %w", err)
		}
	}
	return agenthook.Output(in, res.Memories), nil
}
