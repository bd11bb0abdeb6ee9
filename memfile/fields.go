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
