/**
 * Official domains of network operators the index names (provider lists and
 * crawler families), for the legacy `detail=1` text. Unknown: no line.
 */
const OPERATOR_DOMAINS: Record<string, string> = {
  'Amazon Web Services': 'aws.amazon.com',
  'Google Cloud': 'cloud.google.com',
  Google: 'google.com',
  'Microsoft Azure': 'azure.microsoft.com',
  'Oracle Cloud': 'oracle.com',
  Cloudflare: 'cloudflare.com',
  Fastly: 'fastly.com',
  Imperva: 'imperva.com',
  CDN77: 'cdn77.com',
  GitHub: 'github.com',
  Atlassian: 'atlassian.com',
  Datadog: 'datadoghq.com',
  Zscaler: 'zscaler.com',
  DigitalOcean: 'digitalocean.com',
  'Akamai Linode': 'linode.com',
  Vultr: 'vultr.com',
  Mullvad: 'mullvad.net',
  'Proton VPN': 'protonvpn.com',
  'Private Internet Access': 'privateinternetaccess.com',
  'iCloud Private Relay': 'apple.com',
  // Crawler owners (src/crawlers/registry.ts): the operator of an official crawler range.
  Microsoft: 'microsoft.com',
  Apple: 'apple.com',
  DuckDuckGo: 'duckduckgo.com',
  OpenAI: 'openai.com',
  Perplexity: 'perplexity.ai',
  Ahrefs: 'ahrefs.com',
  Yandex: 'yandex.com',
  Baidu: 'baidu.com',
  Amazon: 'amazon.com',
  'Common Crawl': 'commoncrawl.org',
};

/** The official domain of an operator name, or null when not known. */
export function operatorDomain(operator: string | null | undefined): string | null {
  return operator ? (OPERATOR_DOMAINS[operator] ?? null) : null;
}
