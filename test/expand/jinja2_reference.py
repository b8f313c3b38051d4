"""The oracle of the Jinja fidelity suite: renders templates with Python's Jinja2.

Reads a JSON list of cases on stdin, each {"name", "template", "context", "files"} (or
"contextYaml": the context as YAML text, read with yaml.safe_load as DM read data), and writes a
JSON list of results, each {"ok": true, "text": ...} or {"ok": false, "error": "Type: message"}.
The environment is Deployment Manager's: Jinja2 defaults (autoescape off, trailing newline
dropped, plain Undefined), templates by name from the files, and no extra filters (DM's
expander registered none).
"""
import json
import sys

import jinja2
import yaml  # noqa: F401  (the suite requires the same interpreter to have PyYAML)


def render(case):
    env = jinja2.Environment(loader=jinja2.DictLoader(case.get('files') or {}))
    try:
        template = env.from_string(case['template'])
        context = yaml.safe_load(case['contextYaml']) if 'contextYaml' in case else case.get('context')
        return {'ok': True, 'text': template.render(**(context or {}))}
    except jinja2.TemplateSyntaxError as e:
        return {'ok': False, 'error': '%s: %s' % (type(e).__name__, e.message), 'message': e.message,
                'line': e.lineno}
    except Exception as e:  # every failure is a result to compare, not a crash
        return {'ok': False, 'error': '%s: %s' % (type(e).__name__, e)}


def main():
    cases = json.load(sys.stdin)
    json.dump([render(c) for c in cases], sys.stdout)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
