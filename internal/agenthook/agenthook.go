// Package agenthook speaks the context hooks of coding agents: the JSON an
// agent writes on a hook's standard input, the JSON it reads back, and the
// record of which memories each session was given.
//
// Claude Code (SessionStart, UserPromptSubmit) and Gemini CLI
// (SessionStart, BeforeAgent) send one JSON object with session_id, cwd
// and hook_event_name, plus prompt (a prompt event) or source (session
// start: startup, resume, clear, compact); both read back, on exit 0,
//
//	{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"..."}}
//
// and add additionalContext to the model's context. An empty standard
// output adds nothing.
package agenthook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Kind is what a hook event asks for.
type Kind int

// The kinds of hook event.
const (
	Start  Kind = iota + 1 // a session starts (or resumes, or its context was cleared)
	Prompt                 // the user sent a prompt
)

// events maps each agent's event names to their kind.
var events = map[string]map[string]Kind{
	"claude": {"SessionStart": Start, "UserPromptSubmit": Prompt},
	"gemini": {"SessionStart": Start, "BeforeAgent": Prompt},
}

// Input is a hook's input as memsync reads it.
type Input struct {
	Agent   string
	Event   string // hook_event_name, as the agent spells it
	Kind    Kind
	Session string // session_id
	Cwd     string // the folder the agent works in; "" when not given
	Prompt  string // the prompt of a Prompt event
	Source  string // why a session starts: startup, resume, clear, compact
}

// Fresh tells whether a Start leaves the model without what the session
// was given so far (a new session, a cleared or compacted context): only
// a resumed session keeps its history.
func (in Input) Fresh() bool { return in.Kind == Start && in.Source != "resume" }

// MaxInput bounds the hook input read (a prompt may be long).
const MaxInput = 16 << 20

// ErrUnknownAgent is Parse's error for an agent it does not know.
var ErrUnknownAgent = errors.New("unknown agent")

// Parse reads the hook input of agent (claude or gemini).
func Parse(agent string, data []byte) (Input, error) {
	names, ok := events[agent]
	if !ok {
		return Input{}, fmt.Errorf("%w %q: memsync answers the hooks of claude and gemini", ErrUnknownAgent, agent)
	}
	var raw struct {
		Session string `json:"session_id"`
		Event   string `json:"hook_event_name"`
		Cwd     string `json:"cwd"`
		Prompt  string `json:"prompt"`
		Source  string `json:"source"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return Input{}, fmt.Errorf("the hook input is not the JSON object %s sends: %w", agent, err)
	}
	in := Input{Agent: agent, Event: raw.Event, Kind: names[raw.Event], Session: raw.Session, Cwd: raw.Cwd, Prompt: raw.Prompt, Source: raw.Source}
	if in.Kind == 0 {
		known := make([]string, 0, len(names))
		for n := range names {
			known = append(known, n)
		}
		slices.Sort(known)
		return Input{}, fmt.Errorf("hook event %q: memsync answers %s's %v", raw.Event, agent, known)
	}
	return in, nil
}

// Output is what the hook prints to add text to the model's context for
// in; nil when text is empty (nothing to add: print nothing).
func Output(in Input, text string) []byte {
	if text == "" {
		return nil
	}
	type specific struct {
		Event   string `json:"hookEventName"`
		Context string `json:"additionalContext"`
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<ann@example.com>" as it is
	if err := enc.Encode(struct {
		Specific specific `json:"hookSpecificOutput"`
	}{specific{in.Event, text}}); err != nil { // strings always encode
		panic(err)
	}
	return b.Bytes()
}

// Empty is what the hook prints when it adds nothing because of an error
// it says on the standard error: "{}" for Gemini CLI, which reads the
// standard error as a message for the user when the output is empty;
// nil (nothing) for Claude Code, which shows it only in debug mode.
func Empty(agent string) []byte {
	if agent == "gemini" {
		return []byte("{}\n")
	}
	return nil
}
