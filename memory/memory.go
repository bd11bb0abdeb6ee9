package memory

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Item is one thing to remember:
// what went in, what came out, and who produced it.
type Item struct {
	Input  string // e.g. the user's prompt
	Output string // e.g. the agent's answer or what it learned
	Source string // the agent or system that produced the output
}

// Text is the item as a memory's content: the output alone when there is no
// input, else "Input: …" and "Output: …" on their own lines.
func (it Item) Text() string {
	in, out := strings.TrimSpace(it.Input), strings.TrimSpace(it.Output)
	switch {
	case in == "":
		return out
	case out == "":
		return in
	}
	return "Input: " + in + "\nOutput: " + out
}

// Entry is one remembered thing, as a Recorder returns it and a Retriever
// finds it.
type Entry struct {
	ID        string // opaque; FileStore's are memsync's entry IDs
	Title     string
	Type      string
	Tags      []string
	Content   string
	Source    string
	CreatedAt time.Time
	Score     float64 // relevance to the query that found it (0 without one)
}

// Query is what a Retriever is asked for.
type Query struct {
	Search string // words to look for; empty: the most recent memories
	Limit  int    // at most this many; 0 = DefaultLimit
}

// DefaultLimit is the limit of a Query that sets none.
const DefaultLimit = 10

// Recorder stores items as memories and returns them with their IDs.
type Recorder interface {
	Record(ctx context.Context, items []Item) ([]Entry, error)
}

// Retriever finds memories for a query, best first.
type Retriever interface {
	Retrieve(ctx context.Context, q Query) ([]Entry, error)
}

// ErrNoRecorder and ErrNoRetriever: the Agent lacks that part.
var (
	ErrNoRecorder  = errors.New("memory agent has no recorder")
	ErrNoRetriever = errors.New("memory agent has no retriever")
)

// Agent orchestrates a Recorder and a Retriever. Either may
// be nil if the agent is used only one way. Its fields are read on each call;
// set them before the agent is shared between goroutines.
type Agent struct {
	Recorder  Recorder
	Retriever Retriever
	// AutoUpdate records every operation run through Invoke.
	AutoUpdate bool
	// Source names this agent in what it records (Item.Source when empty).
	Source string
	// SubscribeTopics are the topics Subscribe listens to.
	SubscribeTopics []string
	// OnError receives errors of recordings nobody waits for (Invoke's
	// auto-update, subscriptions). nil drops them.
	OnError func(error)
}

// Record stores items through the Recorder.
func (a *Agent) Record(ctx context.Context, items ...Item) ([]Entry, error) {
	if a.Recorder == nil {
		return nil, ErrNoRecorder
	}
	for i := range items {
		if items[i].Source == "" {
			items[i].Source = a.Source
		}
	}
	return a.Recorder.Record(ctx, items)
}

// Retrieve asks the Retriever.
func (a *Agent) Retrieve(ctx context.Context, q Query) ([]Entry, error) {
	if a.Retriever == nil {
		return nil, ErrNoRetriever
	}
	if q.Limit <= 0 {
		q.Limit = DefaultLimit
	}
	return a.Retriever.Retrieve(ctx, q)
}

// Invoke runs an operation on input. With AutoUpdate, a successful
// operation's input and output are recorded; a failed recording goes to
// OnError and does not fail the operation.
func (a *Agent) Invoke(ctx context.Context, input string, op func(ctx context.Context, input string) (string, error)) (string, error) {
	out, err := op(ctx, input)
	if err != nil || !a.AutoUpdate {
		return out, err
	}
	if _, rerr := a.Record(ctx, Item{Input: input, Output: out}); rerr != nil {
		a.report(rerr)
	}
	return out, nil
}

func (a *Agent) report(err error) {
	if a.OnError != nil {
		a.OnError(err)
	}
}

// Message is what is published on a topic.
type Message struct {
	Topic string
	Item  Item
}

// PubSub is the small publish/subscribe interface a Agent attaches to.
// Subscribe calls handler for each message published on topic until the
// returned function is called.
type PubSub interface {
	Subscribe(topic string, handler func(ctx context.Context, m Message)) (unsubscribe func())
}

// Subscribe attaches the agent to ps: everything published on its
// SubscribeTopics is recorded. The returned function detaches it.
func (a *Agent) Subscribe(ps PubSub) (unsubscribe func()) {
	var offs []func()
	for _, t := range a.SubscribeTopics {
		offs = append(offs, ps.Subscribe(t, func(ctx context.Context, m Message) {
			if _, err := a.Record(ctx, m.Item); err != nil {
				a.report(err)
			}
		}))
	}
	return func() {
		for _, off := range offs {
			off()
		}
	}
}
