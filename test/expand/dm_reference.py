"""A small reference expander: Deployment Manager's expansion rules with Jinja2 and PyYAML.

Usage: dm_reference.py CONFIG DEPLOYMENT PROJECT CURRENT_TIME  → {config, layout} as typed JSON:
every mapping a list of [key, value] pairs in its order, every float {"float": repr}, so that the
comparison sees what plain JSON loses (1.0 against 1, the order of integer-like keys).
Written for dm's tests (test/expand/dm-corpus.test.ts) after DM's expandybird: imports by name
(the path as written unless named), types that name a file next to the configuration imported
automatically with their `.schema`, schema defaults filled in before rendering, Jinja2 with its
defaults (final newline dropped, autoescape off), Python templates' GenerateConfig(context) with
DM's yaml (load without a Loader) and Python 2 mapping methods, and DM's layout (properties after
defaults; `resources` only when the template rendered some).
"""
import contextlib
import copy
import importlib.abc
import importlib.util
import json
import os
import re
import sys
import types
import warnings

import jinja2
import jsonschema
import yaml



class ImportsFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """The imported .py files as modules (`a/b.py` is `a.b`), found when imported."""

    loaded = set()

    def __init__(self, files, template):
        self.files = {n: t for n, t in files.items() if n != template}

    def find_spec(self, fullname, path=None, target=None):
        rel = fullname.replace('.', '/')
        if rel + '.py' in self.files:
            return importlib.util.spec_from_loader(fullname, self)
        if any(n.startswith(rel + '/') and n.endswith('.py') for n in self.files):
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        ImportsFinder.loaded.add(module.__name__)
        rel = module.__name__.replace('.', '/') + '.py'
        if rel in self.files:
            exec(compile(self.files[rel], rel, 'exec'), module.__dict__)

class Py2Dict(dict):
    def iteritems(self):
        return iter(self.items())

    def iterkeys(self):
        return iter(self.keys())

    def itervalues(self):
        return iter(self.values())

    def has_key(self, key):
        return key in self


def py2(value):
    if isinstance(value, dict):
        return Py2Dict((k, py2(v)) for k, v in value.items())
    if isinstance(value, list):
        return [py2(v) for v in value]
    return value


def dm_yaml():
    m = types.ModuleType('yaml')
    m.__dict__.update({k: v for k, v in yaml.__dict__.items() if not k.startswith('__')})
    m.load = lambda stream, Loader=None: yaml.safe_load(stream)
    m.dump = lambda data, stream=None, **kw: yaml.dump(data, stream, default_flow_style=None, **kw)
    yaml.add_representer(Py2Dict, yaml.representer.SafeRepresenter.represent_dict)
    return m


def apply_defaults(schema, props):
    """DM's schema defaults: its validator (JSON Schema draft 4) with `properties` setting each
    missing property's default, or the default its `$ref` leads to, before descending; `required`
    ignored. Two readings DM's code leaves open are dm's (docs/expansion.md, "Schemas"): a `$ref`
    that leads to no default adds nothing, and a chain of `$ref`s is followed."""
    out = copy.deepcopy(props)
    body = {k: v for k, v in schema.items() if k not in ('info', 'imports', 'outputs')}
    validate_properties = jsonschema.Draft4Validator.VALIDATORS['properties']

    def referenced_default(validator, ref):
        for _ in range(32):
            with validator.resolver.resolving(ref) as target:
                if '$ref' in target:
                    ref = target['$ref']
                    continue
                return ('default' in target, target.get('default'))
        return (False, None)

    def set_defaults(validator, properties, instance, parent):
        if isinstance(instance, dict):
            for name, sub in (properties or {}).items():
                if not isinstance(sub, dict):
                    continue
                if '$ref' in sub:
                    found, value = referenced_default(validator, sub['$ref'])
                    if found:
                        instance.setdefault(name, copy.deepcopy(value))
                elif 'default' in sub:
                    instance.setdefault(name, copy.deepcopy(sub['default']))
        for error in validate_properties(validator, properties, instance, parent):
            yield error

    def ignore(*_args):
        return iter(())

    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        validator = jsonschema.validators.extend(
            jsonschema.Draft4Validator, {'properties': set_defaults, 'required': ignore})
        list(validator(body).iter_errors(out))
    return out


class Expander(object):
    def __init__(self, config_path, env):
        self.dir = os.path.dirname(os.path.abspath(config_path))
        with open(config_path) as f:
            self.config = yaml.safe_load(f) or {}
        self.files = {}
        self.paths = {}
        for entry in self.config.get('imports') or []:
            path = entry if isinstance(entry, str) else entry['path']
            name = path if isinstance(entry, str) else entry.get('name', path)
            self.paths[name] = os.path.normpath(os.path.join(self.dir, path))
            with open(os.path.join(self.dir, path)) as f:
                self.files[name] = f.read()
            # gcloud uploads the schema beside an import's path under the import's name.
            schema = os.path.join(self.dir, path + '.schema')
            if os.path.isfile(schema) and name + '.schema' not in self.files:
                with open(schema) as f:
                    self.files[name + '.schema'] = f.read()
        self.env = env

    def file(self, name):
        if name not in self.files:
            full = os.path.join(self.dir, name)
            if os.path.isfile(full):
                with open(full) as f:
                    self.files[name] = f.read()
        return self.files.get(name)

    def is_template(self, type_):
        return type_.endswith(('.jinja', '.py', '.yaml')) and self.file(type_) is not None

    def render(self, resource, props):
        type_ = resource['type']
        env = dict(self.env, name=resource['name'], type=type_)
        source = self.files[type_]
        if type_.endswith('.py'):
            sys.modules['yaml'] = dm_yaml()
            # DM's importer: a helper module is read from the imports when a template imports it
            # (lazily), not run beforehand; each render starts with none of them loaded.
            finder = ImportsFinder(self.files, type_)
            for name in list(sys.modules):
                if name in ImportsFinder.loaded:
                    del sys.modules[name]
            ImportsFinder.loaded.clear()
            sys.meta_path.insert(0, finder)
            try:
                module = types.ModuleType('template')
                exec(compile(source, type_, 'exec'), module.__dict__)
                context = types.SimpleNamespace(properties=py2(props), env=py2(env), imports=py2(self.files))
                generate = getattr(module, 'GenerateConfig', None) or module.generate_config
                with contextlib.redirect_stdout(sys.stderr):  # a template's print() is not output
                    result = generate(context)
            finally:
                sys.meta_path.remove(finder)
            return yaml.safe_load(result) if isinstance(result, str) else json.loads(json.dumps(result))
        jenv = jinja2.Environment(loader=jinja2.DictLoader(self.files))
        text = jenv.from_string(source).render(properties=props, env=env, imports=self.files)
        return yaml.safe_load(text)

    def expand_list(self, resources):
        config, layout = [], []
        for resource in resources or []:
            if not self.is_template(resource['type']):
                config.append(resource)
                layout.append({'name': resource['name'], 'type': resource['type']})
                continue
            props = resource.get('properties') or {}
            schema_text = self.file(resource['type'] + '.schema')
            if schema_text is not None:
                schema = yaml.safe_load(schema_text) or {}
                # gcloud uploaded a schema's imports, relative to the schema's file.
                base = os.path.dirname(self.paths.get(resource['type'], os.path.join(self.dir, resource['type'])))
                for imp in schema.get('imports') or []:
                    imp_name = imp.get('name', imp['path'])
                    if imp_name not in self.files:
                        full = os.path.join(base, imp['path'])
                        with open(full) as f:
                            self.files[imp_name] = f.read()
                        self.paths[imp_name] = os.path.normpath(full)
                        if os.path.isfile(full + '.schema') and imp_name + '.schema' not in self.files:
                            with open(full + '.schema') as f:
                                self.files[imp_name + '.schema'] = f.read()
                props = apply_defaults(schema, props)
            output = self.render(resource, props)
            sub_config, sub_layout = self.expand_list(output.get('resources'))
            entry = {'name': resource['name'], 'type': resource['type']}
            if 'properties' in resource or schema_text is not None:
                entry['properties'] = props
            if sub_layout:
                entry['resources'] = sub_layout
            if output.get('outputs'):
                entry['outputs'] = [{'name': o['name'], 'value': o.get('value')} for o in output['outputs']]
            config.extend(sub_config)
            layout.append(entry)
        return config, layout


REF = re.compile(r'\$\(ref\.([^)]*)\)')


def resolve_outputs(config, layout):
    """DM's template outputs: `$(ref.<template>.<output>)` is the output's value (the value itself
    for a whole string, its text inside one); in a template's own outputs, its own name means the
    resource of that name. Written for dm's tests after DM's documentation."""
    templates = {}
    primitives = set(r['name'] for r in config)

    def collect(entries):
        for e in entries:
            if e.get('outputs') and e['name'] not in templates:
                templates[e['name']] = e['outputs']
            collect(e.get('resources') or [])

    collect(layout)

    def find(body, own):
        parts = body.split('.')
        for i in range(len(parts) - 1, 0, -1):
            name = '.'.join(parts[:i])
            if name in templates and not (name == own and name in primitives):
                for o in templates[name]:
                    if o['name'] == parts[i] and i == len(parts) - 1:
                        return name, o
        return None

    def sub(v, own):
        if isinstance(v, str):
            m = REF.fullmatch(v)
            if m and find(m.group(1), own):
                name, o = find(m.group(1), own)
                return sub(o['value'], name)

            def text(m):
                found = find(m.group(1), own)
                if not found:
                    return m.group(0)
                x = sub(found[1]['value'], found[0])
                return x if isinstance(x, str) else json.dumps(x, separators=(',', ':'))
            return REF.sub(text, v)
        if isinstance(v, list):
            return [sub(x, own) for x in v]
        if isinstance(v, dict):
            return dict((k, sub(x, own)) for k, x in v.items())
        return v

    for name, outputs in templates.items():
        for o in outputs:
            o['value'] = sub(o['value'], name)
    return [sub(r, '') for r in config]


def typed(value):
    if isinstance(value, dict):
        return {'dict': [[k, typed(v)] for k, v in value.items()]}
    if isinstance(value, list):
        return [typed(v) for v in value]
    if isinstance(value, float):
        return {'float': repr(value)}
    return value


def main():
    config_path, deployment, project, current_time = sys.argv[1:5]
    expander = Expander(config_path, {'deployment': deployment, 'project': project, 'current_time': current_time})
    config, layout = expander.expand_list(expander.config.get('resources'))
    config = resolve_outputs(config, layout)
    print(json.dumps(typed({'config': {'resources': config}, 'layout': {'resources': layout}})))


if __name__ == '__main__':
    main()
