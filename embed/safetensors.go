package embed

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// maxHeader caps the JSON header of a safetensors file (the format's own
// reader uses the same cap); real headers are a few hundred bytes.
const maxHeader = 100 << 20

// tensor is one tensor of a safetensors file: its bytes point into the file.
type tensor struct {
	dtype string
	shape []int
	data  []byte
}

// dtypeSize gives the byte size of the element types this package knows;
// false for another.
func dtypeSize(dtype string) (int, bool) {
	switch dtype {
	case "F64", "I64":
		return 8, true
	case "F32", "I32":
		return 4, true
	case "F16", "BF16", "I16":
		return 2, true
	case "I8", "U8", "BOOL":
		return 1, true
	}
	return 0, false
}

// parseSafetensors reads the tensors of a safetensors file held in b: an
// 8-byte little-endian header length, a JSON header naming each tensor's
// dtype, shape and data_offsets (relative to the end of the header), then the
// data. Every length and offset is checked against b, so a corrupt or hostile
// file is an error, never a panic or an allocation beyond len(b).
func parseSafetensors(b []byte) (map[string]tensor, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("file is %d bytes, shorter than the 8-byte header length", len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n > maxHeader || n > uint64(len(b)-8) {
		return nil, fmt.Errorf("header length %d exceeds the file (%d bytes) or the %d-byte cap", n, len(b), maxHeader)
	}
	head := bytes.TrimRight(b[8:8+n], " ")
	data := b[8+n:]
	if len(head) == 0 || head[0] != '{' {
		return nil, fmt.Errorf("header is not a JSON object")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(head, &raw); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	out := make(map[string]tensor, len(raw))
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		var t struct {
			Dtype   string   `json:"dtype"`
			Shape   []uint64 `json:"shape"`
			Offsets []uint64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(msg, &t); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		size, ok := dtypeSize(t.Dtype)
		if !ok {
			return nil, fmt.Errorf("tensor %q: unknown dtype %q", name, t.Dtype)
		}
		if len(t.Offsets) != 2 || t.Offsets[0] > t.Offsets[1] || t.Offsets[1] > uint64(len(data)) {
			return nil, fmt.Errorf("tensor %q: data_offsets %v outside the %d data bytes", name, t.Offsets, len(data))
		}
		want := uint64(size)
		shape := make([]int, len(t.Shape))
		for i, d := range t.Shape {
			if d != 0 && want > (1<<62)/d {
				return nil, fmt.Errorf("tensor %q: shape %v overflows", name, t.Shape)
			}
			want *= d
			shape[i] = int(d)
		}
		if got := t.Offsets[1] - t.Offsets[0]; got != want {
			return nil, fmt.Errorf("tensor %q: shape %v of %s needs %d bytes, data_offsets give %d", name, t.Shape, t.Dtype, want, got)
		}
		out[name] = tensor{dtype: t.Dtype, shape: shape, data: data[t.Offsets[0]:t.Offsets[1]]}
	}
	return out, nil
}

// f16 converts an IEEE 754 half-precision number to float32.
func f16(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf or NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
	case frac == 0: // signed zero
		return math.Float32frombits(sign)
	}
	// subnormal: frac * 2^-24
	v := float32(frac) * (1.0 / (1 << 24))
	if sign != 0 {
		return -v
	}
	return v
}

// floats decodes a 1-D tensor of floating-point numbers to float32.
func (t tensor) floats() ([]float32, error) {
	size, _ := dtypeSize(t.dtype)
	n := len(t.data) / size
	out := make([]float32, n)
	for i := range out {
		v, ok := t.at(i)
		if !ok {
			return nil, fmt.Errorf("dtype %s is not supported here (want F64, F32, F16 or BF16)", t.dtype)
		}
		out[i] = v
	}
	return out, nil
}

// at returns element i of a float (or I8) tensor as float32.
func (t tensor) at(i int) (float32, bool) {
	d := t.data
	switch t.dtype {
	case "F32":
		return math.Float32frombits(binary.LittleEndian.Uint32(d[4*i:])), true
	case "F16":
		return f16(binary.LittleEndian.Uint16(d[2*i:])), true
	case "BF16":
		return math.Float32frombits(uint32(binary.LittleEndian.Uint16(d[2*i:])) << 16), true
	case "F64":
		return float32(math.Float64frombits(binary.LittleEndian.Uint64(d[8*i:]))), true
	case "I8":
		return float32(int8(d[i])), true
	}
	return 0, false
}

// ints decodes a 1-D tensor of I32 or I64 integers.
func (t tensor) ints() ([]int64, error) {
	switch t.dtype {
	case "I32":
		out := make([]int64, len(t.data)/4)
		for i := range out {
			out[i] = int64(int32(binary.LittleEndian.Uint32(t.data[4*i:])))
		}
		return out, nil
	case "I64":
		out := make([]int64, len(t.data)/8)
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint64(t.data[8*i:]))
		}
		return out, nil
	}
	return nil, fmt.Errorf("dtype %s is not supported here (want I32 or I64)", t.dtype)
}

func f32le(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

// nonFinite returns the first row (of rows of dim numbers) of a float
// tensor holding NaN or an infinity, read from the exponent bits (all ones).
func (t tensor) nonFinite(dim int) (int, bool) {
	d := t.data
	at := -1
	switch t.dtype {
	case "F32":
		for i := 0; i+4 <= len(d); i += 4 {
			if binary.LittleEndian.Uint32(d[i:])&0x7f800000 == 0x7f800000 {
				at = i / 4
				break
			}
		}
	case "F16", "BF16":
		mask := uint16(0x7c00)
		if t.dtype == "BF16" {
			mask = 0x7f80
		}
		for i := 0; i+2 <= len(d); i += 2 {
			if binary.LittleEndian.Uint16(d[i:])&mask == mask {
				at = i / 2
				break
			}
		}
	case "F64":
		for i := 0; i+8 <= len(d); i += 8 {
			if binary.LittleEndian.Uint64(d[i:])&0x7ff0000000000000 == 0x7ff0000000000000 {
				at = i / 8
				break
			}
		}
	}
	if at < 0 {
		return 0, false
	}
	return at / dim, true
}
