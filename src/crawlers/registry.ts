/**
 * The crawler registry as data: one entry per crawler family, keyed by the
 * names `crawler-ranges` feeds use (docs/interface.md). Each entry cites
 * the provider's own documentation of its user agents and verification.
 */

/** How a family is proven genuine (spec 4.3 rules 1 and 2). */
export type VerificationMethod = 'reverse_forward_dns' | 'ip_range_and_user_agent';

/** What a family of crawlers does, for policy decisions. */
export type CrawlerType =
  | 'search'
  | 'ai_crawler'
  | 'ai_search'
  | 'ai_assistant_fetcher'
  | 'ads'
  | 'user_triggered_fetcher'
  | 'seo_tool'
  | 'archive';

export interface CrawlerFamily {
  /** Registry key, as named by `crawler-ranges` feeds. */
  key: string;
  /** Operator shown as `crawler_provider`. */
  provider: string;
  /** Display name of the family. */
  name: string;
  crawlerType: CrawlerType;
  /** Case-insensitive substrings of the User-Agent that claim this family. */
  userAgentTokens: readonly string[];
  /** Reverse-DNS suffixes that prove the family (empty when the provider documents none). */
  dnsSuffixes: readonly string[];
  /** File name of the provider's published range list, when it publishes one. */
  rangeFeed: string | null;
  verification: VerificationMethod;
}

const FAMILIES: readonly CrawlerFamily[] = [
  // https://developers.google.com/search/docs/crawling-indexing/verifying-googlebot
  // https://developers.google.com/search/docs/crawling-indexing/google-common-crawlers
  {
    key: 'googlebot',
    provider: 'Google',
    name: 'Googlebot',
    crawlerType: 'search',
    userAgentTokens: ['Googlebot', 'Storebot-Google', 'Google-InspectionTool', 'GoogleOther', 'Google-CloudVertexBot'],
    dnsSuffixes: ['googlebot.com'],
    rangeFeed: 'googlebot.json',
    verification: 'reverse_forward_dns',
  },
  // https://developers.google.com/search/docs/crawling-indexing/google-special-case-crawlers
  // (reverse DNS: rate-limited-proxy-*.google.com)
  {
    key: 'google-special',
    provider: 'Google',
    name: 'Google special-case crawlers',
    crawlerType: 'ads',
    userAgentTokens: ['AdsBot-Google', 'Mediapartners-Google', 'APIs-Google', 'Google-Safety'],
    dnsSuffixes: ['google.com'],
    rangeFeed: 'special-crawlers.json',
    verification: 'reverse_forward_dns',
  },
  // https://developers.google.com/search/docs/crawling-indexing/google-user-triggered-fetchers
  // (reverse DNS: *.gae.googleusercontent.com or google-proxy-*.google.com; plain
  // googleusercontent.com is any Google Cloud customer, so it proves nothing)
  {
    key: 'google-user-triggered',
    provider: 'Google',
    name: 'Google user-triggered fetchers',
    crawlerType: 'user_triggered_fetcher',
    userAgentTokens: ['FeedFetcher-Google', 'Google-Read-Aloud', 'Google-Site-Verification', 'GoogleProducer', 'Google-Favicon'],
    dnsSuffixes: ['gae.googleusercontent.com', 'google.com'],
    rangeFeed: 'user-triggered-fetchers.json',
    verification: 'reverse_forward_dns',
  },
  // https://www.bing.com/webmasters/help/how-to-verify-bingbot-3905dc26
  {
    key: 'bingbot',
    provider: 'Microsoft',
    name: 'Bingbot',
    crawlerType: 'search',
    userAgentTokens: ['bingbot', 'BingPreview', 'msnbot', 'adidxbot'],
    dnsSuffixes: ['search.msn.com'],
    rangeFeed: 'bingbot.json',
    verification: 'reverse_forward_dns',
  },
  // https://support.apple.com/en-us/119829 (About Applebot)
  {
    key: 'applebot',
    provider: 'Apple',
    name: 'Applebot',
    crawlerType: 'search',
    userAgentTokens: ['Applebot'],
    dnsSuffixes: ['applebot.apple.com'],
    rangeFeed: 'applebot.json',
    verification: 'reverse_forward_dns',
  },
  // https://duckduckgo.com/duckduckgo-help-pages/results/duckduckbot (IP list only, no DNS method)
  {
    key: 'duckduckbot',
    provider: 'DuckDuckGo',
    name: 'DuckDuckBot',
    crawlerType: 'search',
    userAgentTokens: ['DuckDuckBot'],
    dnsSuffixes: [],
    rangeFeed: 'duckduckbot.json',
    verification: 'ip_range_and_user_agent',
  },
  // https://platform.openai.com/docs/bots (ranges at openai.com/gptbot.json)
  {
    key: 'gptbot',
    provider: 'OpenAI',
    name: 'GPTBot',
    crawlerType: 'ai_crawler',
    userAgentTokens: ['GPTBot'],
    dnsSuffixes: [],
    rangeFeed: 'gptbot.json',
    verification: 'ip_range_and_user_agent',
  },
  // https://platform.openai.com/docs/bots (ranges at openai.com/searchbot.json)
  {
    key: 'oai-searchbot',
    provider: 'OpenAI',
    name: 'OAI-SearchBot',
    crawlerType: 'ai_search',
    userAgentTokens: ['OAI-SearchBot'],
    dnsSuffixes: [],
    rangeFeed: 'searchbot.json',
    verification: 'ip_range_and_user_agent',
  },
  // https://platform.openai.com/docs/bots (ranges at openai.com/chatgpt-user.json)
  {
    key: 'chatgpt-user',
    provider: 'OpenAI',
    name: 'ChatGPT-User',
    crawlerType: 'ai_assistant_fetcher',
    userAgentTokens: ['ChatGPT-User'],
    dnsSuffixes: [],
    rangeFeed: 'chatgpt-user.json',
    verification: 'ip_range_and_user_agent',
  },
  // https://docs.perplexity.ai/guides/bots (ranges at www.perplexity.ai/perplexitybot.json)
  {
    key: 'perplexitybot',
    provider: 'Perplexity',
    name: 'PerplexityBot',
    crawlerType: 'ai_search',
    userAgentTokens: ['PerplexityBot'],
    dnsSuffixes: [],
    rangeFeed: 'perplexitybot.json',
    verification: 'ip_range_and_user_agent',
  },
  // https://docs.perplexity.ai/guides/bots (ranges at www.perplexity.ai/perplexity-user.json)
  {
    key: 'perplexity-user',
    provider: 'Perplexity',
    name: 'Perplexity-User',
    crawlerType: 'ai_assistant_fetcher',
    userAgentTokens: ['Perplexity-User'],
    dnsSuffixes: [],
    rangeFeed: 'perplexity-user.json',
    verification: 'ip_range_and_user_agent',
  },
  // https://ahrefs.com/robot (reverse DNS ends in ahrefs.com or ahrefs.net;
  // ranges at api.ahrefs.com/v3/public/crawler-ip-ranges)
  {
    key: 'ahrefsbot',
    provider: 'Ahrefs',
    name: 'AhrefsBot',
    crawlerType: 'seo_tool',
    userAgentTokens: ['AhrefsBot', 'AhrefsSiteAudit'],
    dnsSuffixes: ['ahrefs.com', 'ahrefs.net'],
    rangeFeed: 'ahrefs-crawler-ip-ranges.json',
    verification: 'reverse_forward_dns',
  },
  // https://yandex.com/support/webmaster/robot-workings/check-yandex-robots.html
  {
    key: 'yandexbot',
    provider: 'Yandex',
    name: 'YandexBot',
    crawlerType: 'search',
    userAgentTokens: ['YandexBot', 'YandexImages', 'YandexMobileBot', 'YandexRenderResourcesBot'],
    dnsSuffixes: ['yandex.ru', 'yandex.net', 'yandex.com'],
    rangeFeed: null,
    verification: 'reverse_forward_dns',
  },
  // https://help.baidu.com/question?prod_id=99&class=0&id=3001 (Baiduspider verification)
  {
    key: 'baiduspider',
    provider: 'Baidu',
    name: 'Baiduspider',
    crawlerType: 'search',
    userAgentTokens: ['Baiduspider'],
    dnsSuffixes: ['baidu.com', 'baidu.jp'],
    rangeFeed: null,
    verification: 'reverse_forward_dns',
  },
  // https://developer.amazon.com/amazonbot (hosts are *.crawl.amazonbot.amazon)
  {
    key: 'amazonbot',
    provider: 'Amazon',
    name: 'Amazonbot',
    crawlerType: 'ai_crawler',
    userAgentTokens: ['Amazonbot'],
    dnsSuffixes: ['crawl.amazonbot.amazon'],
    rangeFeed: null,
    verification: 'reverse_forward_dns',
  },
  // https://commoncrawl.org/ccbot (hosts are *.crawl.commoncrawl.org; ranges at
  // index.commoncrawl.org/ccbot.json, not among the shipped feeds)
  {
    key: 'ccbot',
    provider: 'Common Crawl',
    name: 'CCBot',
    crawlerType: 'archive',
    userAgentTokens: ['CCBot'],
    dnsSuffixes: ['crawl.commoncrawl.org'],
    rangeFeed: 'ccbot.json',
    verification: 'reverse_forward_dns',
  },
];

const BY_KEY = new Map(FAMILIES.map((f) => [f.key, f]));

/** Every registered crawler family, in registry order. */
export const CRAWLER_FAMILIES: readonly CrawlerFamily[] = FAMILIES;

/** Every registry key (the values a `crawler-ranges` feed may name). */
export const CRAWLER_KEYS: readonly string[] = FAMILIES.map((f) => f.key);

/** The family registered under a key, or null for an unknown or null key. */
export function crawlerFamily(key: string | null | undefined): CrawlerFamily | null {
  return key ? (BY_KEY.get(key) ?? null) : null;
}
