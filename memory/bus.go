package memory

import (
	"context"
	"slices"
	"sync"
)

// Bus is an in-process PubSub: Publish calls the topic's handlers in the
// order they subscribed, in the publisher's goroutine. The zero value is
// ready to use.
type Bus struct {
	mu   sync.Mutex
	next int
	subs map[string][]subscription
}

type subscription struct {
	id      int
	handler func(context.Context, Message)
}

// Subscribe implements PubSub.
func (b *Bus) Subscribe(topic string, handler func(ctx context.Context, m Message)) (unsubscribe func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs == nil {
		b.subs = map[string][]subscription{}
	}
	id := b.next
	b.next++
	b.subs[topic] = append(b.subs[topic], subscription{id, handler})
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.subs[topic] = slices.DeleteFunc(b.subs[topic], func(s subscription) bool { return s.id == id })
	}
}

// Publish delivers an item on a topic to its subscribers.
func (b *Bus) Publish(ctx context.Context, topic string, it Item) {
	b.mu.Lock()
	subs := slices.Clone(b.subs[topic])
	b.mu.Unlock()
	for _, s := range subs {
		s.handler(ctx, Message{Topic: topic, Item: it})
	}
}
