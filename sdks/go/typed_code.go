package keyward

import (
	"fmt"
	"strings"
	"unicode"
)

// The typed form of offline activation's messages (docs/activation.md): bytes in Crockford's
// base32, cut into groups of five characters, each followed by a check character (Luhn mod 32
// over the group's number and its values), the groups joined by "-": "7ZK2Q4-9XP0MC-…". A person
// types it from one screen into another, so reading forgives lower case, O for 0, I and L for 1,
// spaces and missing dashes, and a mistyped character is named by its group.

// crockford is Crockford's base32 alphabet: a character's value is its index.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

const typedGroup = 5

// CodeError is a typed code or an activation message that does not read: a group that does not
// check (a character typed wrong), a code cut short, another kind of message, another version.
type CodeError struct {
	// Group is the typed code's group to look at again, counted from 1 as a person reads;
	// 0 when no group is at fault (the code reads, but is not the message expected).
	Group int
	// Detail says what is wrong, for the person who typed it.
	Detail string
}

func (e *CodeError) Error() string { return "keyward: " + e.Detail }

func codeError(group int, format string, args ...interface{}) *CodeError {
	return &CodeError{Group: group, Detail: fmt.Sprintf(format, args...)}
}

// crockfordValue is a character's value, forgiving case, O for 0, I and L for 1; -1 for none.
func crockfordValue(c byte) int {
	if c >= 'a' && c <= 'z' {
		c -= 'a' - 'A'
	}
	switch c {
	case 'O':
		c = '0'
	case 'I', 'L':
		c = '1'
	}
	return strings.IndexByte(crockford, c)
}

// checkCharacter is the check value of group groupIndex (from 0): Luhn mod 32 over
// groupIndex mod 32 and the group's values, doubling every other value from the rightmost.
func checkCharacter(groupIndex int, values []int) int {
	all := append([]int{groupIndex % 32}, values...)
	sum, double := 0, true
	for i := len(all) - 1; i >= 0; i-- {
		v := all[i]
		if double {
			v *= 2
			v = v/32 + v%32
		}
		sum += v
		double = !double
	}
	return (32 - sum%32) % 32
}

func toFiveBits(data []byte) []int {
	out := make([]int, 0, (len(data)*8+4)/5)
	buffer, bits := 0, 0
	for _, b := range data {
		buffer = buffer<<8 | int(b)
		bits += 8
		for bits >= 5 {
			out = append(out, buffer>>(bits-5)&31)
			bits -= 5
		}
		buffer &= 1<<bits - 1
	}
	if bits > 0 {
		out = append(out, buffer<<(5-bits)&31)
	}
	return out
}

func fromFiveBits(values []int) []byte {
	out := make([]byte, 0, len(values)*5/8)
	buffer, bits := 0, 0
	for _, v := range values {
		buffer = buffer<<5 | v
		bits += 5
		if bits >= 8 {
			out = append(out, byte(buffer>>(bits-8)))
			bits -= 8
		}
		buffer &= 1<<bits - 1
	}
	return out
}

// EncodeTypedCode writes data as a typed code: groups of five Crockford base32 characters and a
// check character, joined by "-" (the last group may be shorter).
func EncodeTypedCode(data []byte) string {
	values := toFiveBits(data)
	var out strings.Builder
	for g := 0; g*typedGroup < len(values); g++ {
		end := (g + 1) * typedGroup
		if end > len(values) {
			end = len(values)
		}
		group := values[g*typedGroup : end]
		if g > 0 {
			out.WriteByte('-')
		}
		for _, v := range group {
			out.WriteByte(crockford[v])
		}
		out.WriteByte(crockford[checkCharacter(g, group)])
	}
	return out.String()
}

// DecodeTypedCode reads a typed code back into its bytes. It forgives lower case, O for 0, I and
// L for 1, spaces and missing dashes. A code that does not read is a *CodeError naming the first
// group (from 1) that does not check.
func DecodeTypedCode(text string) ([]byte, error) {
	compact := strings.Map(func(r rune) rune {
		if r == '-' || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, text)
	if compact == "" {
		return nil, codeError(0, "the code is empty")
	}
	values := make([]int, 0, len(compact))
	for i, r := range []rune(compact) {
		v := -1
		if r < 128 {
			v = crockfordValue(byte(r))
		}
		if v < 0 {
			group := i/(typedGroup+1) + 1
			return nil, codeError(group, "character %q in group %d is not one of the code's", string(r), group)
		}
		values = append(values, v)
	}
	data := make([]int, 0, len(values))
	for g, at := 0, 0; at < len(values); g, at = g+1, at+typedGroup+1 {
		end := at + typedGroup + 1
		if end > len(values) {
			end = len(values)
		}
		group := values[at:end]
		if len(group) < 2 {
			return nil, codeError(g+1, "group %d is cut short", g+1)
		}
		payload := group[:len(group)-1]
		if checkCharacter(g, payload) != group[len(group)-1] {
			return nil, codeError(g+1, "group %d does not check: a character in it is mistyped", g+1)
		}
		data = append(data, payload...)
	}
	return fromFiveBits(data), nil
}
