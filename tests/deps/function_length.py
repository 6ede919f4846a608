#!/usr/bin/env python3
"""Lists the functions of C++ files longer than a limit (lines from the signature to the closing
brace). A heuristic parser: comments, strings and preprocessor lines are blanked, then every
brace block that opens outside a function and follows a parameter list is a function body."""
import re
import sys

def blank(text):
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i)); i = j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j])); i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = ')' + m.group(1) + '"'
            j = text.find(end, i) + len(end)
            out.append(re.sub(r'[^\n]', ' ', text[i:j])); i = j
        elif c == "'" and i > 0 and text[i - 1].isdigit() and i + 1 < n and text[i + 1].isalnum():
            out.append(' '); i += 1  # a digit separator: 100'000
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            out.append(' ' * (j + 1 - i)); i = j + 1
        elif c == '#' and text[text.rfind('\n', 0, i) + 1:i].strip() == '':
            j = i
            while True:
                k = text.find('\n', j)
                if k < 0: k = n; break
                if text[k - 1] != '\\': break
                j = k + 1
            out.append(re.sub(r'[^\n]', ' ', text[i:k])); i = k
        else:
            out.append(c); i += 1
    return ''.join(out)

NOT_FUNCTION = re.compile(r'^\s*(namespace|class|struct|enum|union)\b|^\s*extern\s*$|=\s*$|=\s*[^=(]*$')
LAMBDA = re.compile(r'\]\s*\([^;{]*\)\s*(mutable|noexcept|->[^{;]*|\s)*$')
QUALIFIERS = re.compile(r'\)\s*(const|override|final|noexcept|mutable|&{1,2}|->[^{;]*|:[^;]*|\s)*$')


def without_template_header(head):
    """`head` without a leading template <...> (whose default arguments hold '=')."""
    stripped = head.lstrip()
    if not stripped.startswith('template'):
        return head
    depth = 0
    for j, c in enumerate(stripped):
        if c == '<':
            depth += 1
        elif c == '>':
            depth -= 1
            if depth == 0:
                return stripped[j + 1:]
    return head


def is_function_head(head):
    """Whether a block opened after `head` (the text since the last ; { or }) is a function body."""
    if LAMBDA.search(head):
        return True  # a lambda at namespace or class scope, `const auto f = [](...) {`
    head = without_template_header(head)
    name = head.split('(')[0]
    if ')' not in head or not QUALIFIERS.search(head):
        return False
    return bool(re.search(r'\boperator\b', name)) or not NOT_FUNCTION.search(name)

def functions(path):
    text = blank(open(path, encoding='utf-8').read())
    stack = []  # per open brace: 'function', 'inside' (within a function) or 'scope'
    start = 0   # where the current declaration began
    for i, c in enumerate(text):
        if c == '{':
            inside = any(kind != 'scope' for kind, _ in stack)
            head = text[start:i]
            if inside:
                stack.append(('inside', i))
            elif re.search(r'\)\s*:[^;]*\w\s*$', head):
                # A member's brace initialiser in a constructor's initialiser list.
                stack.append(('initialiser', i))
                continue
            else:
                if is_function_head(head):
                    first = start + len(head) - len(head.lstrip())
                    stack.append(('function', first))
                else:
                    stack.append(('scope', i))
            start = i + 1
        elif c == '}':
            if stack:
                kind, begin = stack.pop()
                if kind == 'initialiser':
                    continue
                if kind == 'function':
                    yield text.count('\n', 0, begin) + 1, text.count('\n', begin, i) + 1
            start = i + 1
        elif c == ';':
            start = i + 1

def main():
    limit = int(sys.argv[1])
    found = 0
    for path in sys.argv[2:]:
        for line, length in functions(path):
            if length > limit:
                print(f'{path}:{line}: a function of {length} lines')
                found += 1
    return 1 if found else 0

if __name__ == '__main__':
    sys.exit(main())
