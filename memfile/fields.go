package memfile

// Field returns the value of the entry's bullet "- key: value" that memsync
// does not interpret itself (Extra), or "" if there is none.
func (e *Entry) Field(key string) string {
	for _, f := range e.Extra {
		if f.Key == key {
			return f.Value
		}
	}
	return ""
}

// SetField sets such a bullet, adding it if the entry has none.
func (e *Entry) SetField(key, value string) {
	for i := range e.Extra {
		if e.Extra[i].Key == key {
			e.Extra[i].Value = value
			return
		}
	}
	e.Extra = append(e.Extra, Field{key, value})
}

// Fields returns the entry's other bullets by key (nil when it has none),
// for output: what JSON shows as "fields".
func (e *Entry) Fields() map[string]string {
	var m map[string]string
	for _, f := range e.Extra {
		if f.Key != "" {
			if m == nil {
				m = map[string]string{}
			}
			m[f.Key] = f.Value
		}
	}
	return m
}

// TagList is Tags, never nil (JSON shows [] rather than null).
func (e *Entry) TagList() []string {
	if e.Tags == nil {
		return []string{}
	}
	return e.Tags
}
