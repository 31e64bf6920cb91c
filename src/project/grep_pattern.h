// Gives an RE2 pattern ripgrep's meaning of \d, \s and \w.
//
// RE2's Perl classes are ASCII-only; ripgrep's (Rust regex) are Unicode,
// so the same pattern would select different lines of non-ASCII text.
// UnicodePerlClasses rewrites each of \d \D \s \S \w \W, outside and
// inside brackets, into classes RE2 can compile with the Unicode meaning:
//
//   \d  \p{Nd}
//   \s  White_Space: U+0009-U+000D U+0020 U+0085 U+00A0 U+1680
//       U+2000-U+200A U+2028 U+2029 U+202F U+205F U+3000 (RE2 has no
//       binary properties; this list is the whole property)
//   \w  \p{L} \p{M} \p{Nd} \p{Pc} \p{Nl}, U+200C U+200D (Join_Control),
//       U+24B6-U+24E9 U+1F130-U+1F149 U+1F150-U+1F169 U+1F170-U+1F189
//       (the Other_Alphabetic symbols: circled and squared letters), i.e.
//       Alphabetic + M + Nd + Pc + Join_Control spelled with what RE2 has
//
// \D \S \W are their complements. RE2 cannot put a complement of a union
// inside brackets, so a bracket class holding \W becomes an alternation
// with the same meaning: [x\W] is (?:[x]|[^<\w>]) and [^x\W] is the union
// over the parts P of \w of [^x<not P>]. \S inside brackets is spelled as
// the ranges White_Space leaves out.
//
// Everything else is copied byte for byte: escaped backslashes (\\w is a
// backslash and a w), \Q...\E, \p{...}, [[:word:]] (ASCII in both
// engines), flags, and \b and \B, which stay ASCII (RE2 has no Unicode
// word boundary). A pattern without these six escapes comes back as it
// was. The rewrite does not validate: it follows RE2's grammar as far as
// it can and copies the rest of a malformed pattern unchanged, so RE2
// still rejects it; callers should report errors against the original.
#pragma once

#include <string>
#include <string_view>

namespace toolvfs {

std::string UnicodePerlClasses(std::string_view pattern);

}  // namespace toolvfs
