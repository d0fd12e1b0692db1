package fuzz

import (
	"fmt"
	"strings"
)

// sourceFault finds what makes emitted CUDA C++ malformed before NVRTC
// sees it (a check the CPU can make): a fmt verb the emitter misused
// ("%!d(MISSING)"), a Go value printed where code belongs ("<nil>",
// "%!v"), brackets that do not balance outside comments and literals.
func sourceFault(src string) string {
	for _, bad := range []string{"%!", "<nil>", "(MISSING)", "(BADINDEX)"} {
		if i := strings.Index(src, bad); i >= 0 {
			return fmt.Sprintf("emitted source holds %q: %s", bad, lineAt(src, i))
		}
	}
	var stack []byte
	pair := map[byte]byte{')': '(', ']': '[', '}': '{'}
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '/':
			if i+1 < len(src) && src[i+1] == '/' {
				for i < len(src) && src[i] != '\n' {
					i++
				}
			} else if i+1 < len(src) && src[i+1] == '*' {
				end := strings.Index(src[i+2:], "*/")
				if end < 0 {
					return "emitted source: an unterminated comment"
				}
				i += end + 3
			}
		case '"', '\'':
			for i++; i < len(src) && src[i] != c; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '(', '[', '{':
			stack = append(stack, c)
		case ')', ']', '}':
			if len(stack) == 0 || stack[len(stack)-1] != pair[c] {
				return fmt.Sprintf("emitted source: unbalanced %q: %s", c, lineAt(src, i))
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return fmt.Sprintf("emitted source: %d brackets left open", len(stack))
	}
	return ""
}

// lineAt is the source line holding byte i.
func lineAt(src string, i int) string {
	lo := strings.LastIndexByte(src[:i], '\n') + 1
	hi := strings.IndexByte(src[i:], '\n')
	if hi < 0 {
		return strings.TrimSpace(src[lo:])
	}
	return strings.TrimSpace(src[lo : i+hi])
}
