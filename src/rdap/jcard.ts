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

function propertiesOf(vcardArray: unknown): JCardProperty[] {
  if (!Array.isArray(vcardArray) || vcardArray[0] !== 'vcard' || !Array.isArray(vcardArray[1])) return [];
  return vcardArray[1].filter(
    (p: unknown): p is JCardProperty =>
      Array.isArray(p) && p.length >= 4 && typeof p[0] === 'string' && typeof p[1] === 'object' && p[1] !== null,
  );
}

/** All string leaves of a property value (structured values are nested arrays). */
function textsOf(values: unknown[]): string[] {
  const out: string[] = [];
  const visit = (v: unknown): void => {
    if (typeof v === 'string') {
      const t = v.trim();
      if (t) out.push(t);
    } else if (Array.isArray(v)) v.forEach(visit);
  };
  values.forEach(visit);
  return out;
}

function pushUnique(list: string[], value: string, caseless: boolean): void {
  const key = caseless ? value.toLowerCase() : value;
  if (!list.some((v) => (caseless ? v.toLowerCase() : v) === key)) list.push(value);
}

/** Phone text without a `tel:` URI scheme (AFRINIC sends `tel:+27...`). */
export function phoneText(value: string): string {
  return value.replace(/^tel:/i, '').trim();
}

/** Extracts kind, fn, org, emails, phones and address lines from a `vcardArray`. */
export function readJCard(vcardArray: unknown): JCardFacts {
  const facts: JCardFacts = { kind: null, fn: null, org: null, emails: [], phones: [], addressLines: [] };
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
        for (const t of texts) pushUnique(facts.emails, t, true);
        break;
      case 'tel':
        for (const t of texts) {
          const phone = phoneText(t);
          if (phone) pushUnique(facts.phones, phone, false);
        }
        break;
      case 'adr': {
        const label = typeof params.label === 'string' ? params.label : '';
        const lines = [...label.split(/\r?\n|\\n/), ...texts].map((l) => l.trim()).filter(Boolean);
        for (const l of lines) pushUnique(facts.addressLines, l, false);
        break;
      }
    }
  }
  return facts;
}
