package sweep

import (
	"encoding/base64"
	"unicode/utf8"
)

// The JSON text of an event, written by hand so that a round that
// reports 10⁵ events does not spend most of its client time in
// reflection: byte for byte what encoding/json writes for the same
// fields (strings escaped as its Marshal escapes them, HTML characters
// included), which TestEventJSONAsEncodingJSON holds it to.

// appendUTF8OrBase64 appends the field name with s: as a JSON string when
// s is valid UTF-8, or else in base64 as name_base64, so that no byte of
// it is lost.
func appendUTF8OrBase64(b []byte, name, s string) []byte {
	b = append(append(b, `,"`...), name...)
	if utf8.ValidString(s) {
		return appendJSONString(append(b, `":`...), s)
	}
	b = append(b, `_base64":"`...)
	return append(base64.StdEncoding.AppendEncode(b, []byte(s)), '"')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it: quotes, backslashes and control characters; <, > and & as
// \u003c, \u003e and \u0026; U+2028 and U+2029; and each byte that is
// not UTF-8 as \ufffd.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, `\b`...)
			case '\f':
				b = append(b, `\f`...)
			case '\n':
				b = append(b, `\n`...)
			case '\r':
				b = append(b, `\r`...)
			case '\t':
				b = append(b, `\t`...)
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}
