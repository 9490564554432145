/**
 * `provider-ranges`: a provider's own published JSON, read by the reader the
 * manifest key `format` names (one module each under provider-formats/).
 * The manifest `category` is the default; a format may map its sections to
 * other categories (see each reader's comment). `provider` names the operator.
 */
import type { FeedParser } from '../feed/source.ts';
import { categoryOption, providerOption, quoted } from './cidr-list.ts';
import { readAtlassian } from './provider-formats/atlassian.ts';
import { readCdn77 } from './provider-formats/cdn77.ts';
import { readDatadog } from './provider-formats/datadog.ts';
import { readFastly } from './provider-formats/fastly.ts';
import { readGithubMeta } from './provider-formats/github-meta.ts';
import { readGoogleGoog } from './provider-formats/google-goog.ts';
import { readImperva } from './provider-formats/imperva.ts';
import { readVultrGeofeed } from './provider-formats/vultr-geofeed.ts';
import { readZscaler } from './provider-formats/zscaler.ts';
import { readEntries, reportEntries } from './provider-formats/report.ts';
import type { ProviderFormat } from './provider-formats/types.ts';

/** Readers by manifest `format` value. */
export const PROVIDER_FORMATS: Readonly<Record<string, ProviderFormat>> = {
  'github-meta': readGithubMeta,
  atlassian: readAtlassian,
  datadog: readDatadog,
  zscaler: readZscaler,
  fastly: readFastly,
  imperva: readImperva,
  cdn77: readCdn77,
  'google-goog': readGoogleGoog,
  'vultr-geofeed': readVultrGeofeed,
};

/** Parses a `provider-ranges` source. */
export const parse: FeedParser = async (ctx, sink) => {
  const format = ctx.requireOption('format');
  const reader = Object.hasOwn(PROVIDER_FORMATS, format) ? PROVIDER_FORMATS[format] : undefined;
  if (!reader) return ctx.fail(`unknown provider-ranges format ${quoted(format)} (expected one of ${Object.keys(PROVIDER_FORMATS).join(', ')})`);
  const category = categoryOption(ctx);
  const provider = providerOption(ctx);
  reportEntries(ctx, sink, readEntries(ctx, reader), { category, provider });
};
