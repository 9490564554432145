/**
 * Reads the parts of an RDAP entity's jCard (RFC 7095 `vcardArray`) that the
 * service uses. Pure. Registries differ: values may be plain text or `tel:`
 * URIs, properties may repeat, and APNIC writes a literal "\n" in labels.
 */

/** What one jCard says, with empty values dropped and duplicates removed. */
export interface JCardFacts {
  /** `kind` in lower case (individual, org, group, ...); null when absent. */
  kind: string | null;
  fn: string | null;
  org: string | null;
  emails: string[];
  phones: string[];
  /** Postal address lines (from `adr` labels and structured values); never shown, only used to scan bodies. */
  addressLines: string[];
}

type JCardProperty = [string, Record<string, unknown>, string, ...unknown[]];

// Bounds against hostile registries (a real card has a handful of each): one
// answer may carry tens of thousands of entries inside the body cap.
/** Properties read from one card; the rest are ignored. */
const MAX_CARD_PROPERTIES = 200;
/** Values kept per list (emails, phones, address lines) of one card or contact. */
export const MAX_CARD_VALUES = 20;
/** String leaves read from one property value, and the nesting depth searched. */
const MAX_PROPERTY_TEXTS = 32;
const MAX_VALUE_DEPTH = 4;

function propertiesOf(vcardArray: unknown): JCardProperty[] {
  if (!Array.isArray(vcardArray) || vcardArray[0] !== 'vcard' || !Array.isArray(vcardArray[1])) return [];
  const out: JCardProperty[] = [];
  const all = vcardArray[1] as unknown[];
  for (let i = 0; i < all.length && out.length < MAX_CARD_PROPERTIES; i++) {
    const p = all[i];
    if (Array.isArray(p) && p.length >= 4 && typeof p[0] === 'string' && typeof p[1] === 'object' && p[1] !== null) out.push(p as JCardProperty);
  }
  return out;
}

/** The string leaves of a property value (structured values are nested arrays), bounded in count and depth. */
function textsOf(values: unknown[]): string[] {
  const out: string[] = [];
  const visit = (v: unknown, depth: number): void => {
    if (out.length >= MAX_PROPERTY_TEXTS) return;
    if (typeof v === 'string') {
      const t = v.trim();
      if (t) out.push(t);
    } else if (Array.isArray(v) && depth < MAX_VALUE_DEPTH) for (const item of v) visit(item, depth + 1);
  };
  for (const v of values) visit(v, 0);
  return out;
}

/**
 * A list of distinct values (case-insensitive when asked), bounded at
 * MAX_CARD_VALUES: membership is a Set lookup, so adding n values is linear.
 */
export class UniqueValues {
  readonly values: string[] = [];
  private readonly seen = new Set<string>();

  constructor(private readonly caseless: boolean) {}

  /** Adds a value unless it is already held or the list is full. */
  add(value: string): void {
    if (this.values.length >= MAX_CARD_VALUES) return;
    const key = this.caseless ? value.toLowerCase() : value;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.values.push(value);
  }

  /** Adds every value of a list. */
  addAll(values: readonly string[]): void {
    for (const v of values) this.add(v);
  }
}

/** Phone text without a `tel:` URI scheme (AFRINIC sends `tel:+27...`). */
export function phoneText(value: string): string {
  return value.replace(/^tel:/i, '').trim();
}

/** Extracts kind, fn, org, emails, phones and address lines from a `vcardArray`. */
export function readJCard(vcardArray: unknown): JCardFacts {
  const facts: JCardFacts = { kind: null, fn: null, org: null, emails: [], phones: [], addressLines: [] };
  const emails = new UniqueValues(true);
  const phones = new UniqueValues(false);
  const addressLines = new UniqueValues(false);
  for (const [rawName, params, , ...values] of propertiesOf(vcardArray)) {
    const name = rawName.toLowerCase();
    const texts = textsOf(values);
    switch (name) {
      case 'kind':
        facts.kind ??= texts[0]?.toLowerCase() ?? null;
        break;
      case 'fn':
        facts.fn ??= texts[0] ?? null;
        break;
      case 'org':
        // A structured org is "Organization;Unit"; the service shows it as one line.
        facts.org ??= texts.length ? texts.join(', ') : null;
        break;
      case 'email':
        emails.addAll(texts);
        break;
      case 'tel':
        for (const t of texts) {
          const phone = phoneText(t);
          if (phone) phones.add(phone);
        }
        break;
      case 'adr': {
        const label = typeof params.label === 'string' ? params.label : '';
        const lines = [...label.split(/\r?\n|\\n/), ...texts].map((l) => l.trim()).filter(Boolean);
        addressLines.addAll(lines);
        break;
      }
    }
  }
  facts.emails = emails.values;
  facts.phones = phones.values;
  facts.addressLines = addressLines.values;
  return facts;
}
