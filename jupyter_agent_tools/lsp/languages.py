"""What the lsp tools need to know of a language itself (not of its server): what a name may
be, and whether it has implementations apart from definitions."""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

# Unicode letters and `_`/`$` start a JavaScript name; letters, digits, marks and connectors
# continue it (ECMAScript's ID_Start / ID_Continue, near enough for a name an agent picks).
_JS_NAME = re.compile(r"[^\W\d]|[$]", re.UNICODE)
_JS_REST = re.compile(r"[\w$\u200c\u200d]*", re.UNICODE)
_C_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_JS_RESERVED = frozenset("""
    break case catch class const continue debugger default delete do else enum export extends
    false finally for function if import in instanceof new null return super switch this throw
    true try typeof var void while with implements interface let package private protected
    public static yield await
""".split())
_C_KEYWORDS = frozenset("""
    auto break case char const continue default do double else enum extern float for goto if
    inline int long register restrict return short signed sizeof static struct switch typedef
    union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic
    _Imaginary _Noreturn _Static_assert _Thread_local alignas alignof bool constexpr false
    nullptr static_assert thread_local true typeof typeof_unqual
""".split())
_CPP_KEYWORDS = _C_KEYWORDS | frozenset("""
    and and_eq asm bitand bitor catch char8_t char16_t char32_t class co_await co_return
    co_yield compl concept consteval constinit const_cast decltype delete dynamic_cast explicit
    export friend mutable namespace new noexcept not not_eq operator or or_eq private
    protected public reinterpret_cast requires static_cast template this throw try typeid
    typename using virtual wchar_t xor xor_eq
""".split())
_RUST_KEYWORDS = frozenset("""
    as break const continue crate else enum extern false fn for if impl in let loop match mod
    move mut pub ref return self Self static struct super trait true type unsafe use where
    while async await dyn abstract become box do final macro override priv typeof unsized
    virtual yield try gen
""".split())
_GO_KEYWORDS = frozenset("""
    break case chan const continue default defer else fallthrough for func go goto if import
    interface map package range return select struct switch type var
""".split())
_DART_RESERVED = frozenset("""
    assert break case catch class const continue default do else enum extends false final
    finally for if in is new null rethrow return super switch this throw true try var void
    while with
""".split())


@dataclass(frozen=True)
class Language:
    """A language's naming rules, keyed by LSP languageId."""

    name: str
    keywords: frozenset[str]
    # C has functions, not interfaces: "implementation" of a name is its definition.
    separate_implementations: bool = True

    def name_problem(self, name: str, old: str = "") -> str | None:
        """Why `name` cannot replace `old` in this language, or None when it can."""
        if self.name in ("JavaScript", "TypeScript") and old.startswith("#"):
            if not name.startswith("#"):
                return f"{old!r} is a private member: its new name starts with '#' too"
            name = name[1:]  # a private member's name is an identifier after its '#'
        if not self._is_identifier(name):
            return f"{name!r} is not a valid {self.name} identifier"
        if name in self.keywords:
            return f"{name!r} is a reserved word in {self.name}"
        return None

    def _is_identifier(self, name: str) -> bool:
        if self.name == "Python":
            return name.isidentifier()
        if self.name in ("JavaScript", "TypeScript"):
            return bool(_JS_NAME.match(name[:1]) and _JS_REST.fullmatch(name[1:]))
        return bool(_C_NAME.fullmatch(name))


LANGUAGES: dict[str, Language] = {
    "python": Language("Python", frozenset(keyword.kwlist)),
    "javascript": Language("JavaScript", _JS_RESERVED),
    "javascriptreact": Language("JavaScript", _JS_RESERVED),
    "typescript": Language("TypeScript", _JS_RESERVED),
    "typescriptreact": Language("TypeScript", _JS_RESERVED),
    "c": Language("C", _C_KEYWORDS, separate_implementations=False),
    "cpp": Language("C++", _CPP_KEYWORDS),
    "rust": Language("Rust", _RUST_KEYWORDS),
    "go": Language("Go", _GO_KEYWORDS),
    "dart": Language("Dart", _DART_RESERVED),
}
