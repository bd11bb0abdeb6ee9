package memory

import (
	"context"
	"sync"
)

// Bus is an in-process PubSub: Publish calls the topic's handlers in turn,
// in the publisher's goroutine. The zero value is ready to use.
type Bus struct {
	mu   sync.Mutex
	next int
	subs map[string]map[int]func(context.Context, Message)
}

// Subscribe implements PubSub.
func (b *Bus) Subscribe(topic string, handler func(ctx context.Context, m Message)) (unsubscribe func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs == nil {
		b.subs = map[string]map[int]func(context.Context, Message){}
	}
	if b.subs[topic] == nil {
		b.subs[topic] = map[int]func(context.Context, Message){}
	}
	id := b.next
	b.next++
	b.subs[topic][id] = handler
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.subs[topic], id)
	}
}

// Publish delivers an item on a topic to its subscribers.
func (b *Bus) Publish(ctx context.Context, topic string, it Item) {
	b.mu.Lock()
	var hs []func(context.Context, Message)
	for _, h := range b.subs[topic] {
		hs = append(hs, h)
	}
	b.mu.Unlock()
	for _, h := range hs {
		h(ctx, Message{Topic: topic, Item: it})
	}
}
