// Kubernetes label selectors (`app=web,tier!=db,env in (a,b),managed,!legacy`)
// matched in process: what `ctx.list` filters the bus' records with, as the
// apiserver would filter a list.

type Requirement = (labels: Readonly<Record<string, string>>) => boolean;

/** One predicate for a selector string; a selector it cannot read throws a TypeError naming it. */
export function labelSelector(selector: string | undefined): Requirement {
  if (selector === undefined || selector.trim() === '') return () => true;
  // split on the commas outside parentheses
  const parts = selector.match(/(?:[^,(]|\([^)]*\))+/g) ?? [];
  const requirements = parts.map((part) => requirement(part.trim(), selector));
  return (labels) => requirements.every((matches) => matches(labels));
}

function requirement(part: string, selector: string): Requirement {
  const set = /^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part);
  if (set !== null) {
    const [, key = '', operator, list = ''] = set;
    const values = new Set(list.split(',').map((value) => value.trim()));
    return operator === 'in'
      ? (labels) => labels[key] !== undefined && values.has(labels[key])
      : (labels) => labels[key] === undefined || !values.has(labels[key]);
  }
  const equality = /^([^\s!=]+)\s*(==|=|!=)\s*([^\s!=]*)$/.exec(part);
  if (equality !== null) {
    const [, key = '', operator, value = ''] = equality;
    return operator === '!='
      ? (labels) => labels[key] !== value
      : (labels) => labels[key] === value;
  }
  const exists = /^(!?)([^\s!=(),]+)$/.exec(part);
  if (exists !== null) {
    const [, not, key = ''] = exists;
    return not === '!'
      ? (labels) => labels[key] === undefined
      : (labels) => labels[key] !== undefined;
  }
  throw new TypeError(`ctx.list: cannot read the label selector "${selector}" at "${part}"`);
}
