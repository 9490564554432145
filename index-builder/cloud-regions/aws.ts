/**
 * AWS regions (`region` of ip-ranges.json) → place. Source: AWS "Regions and
 * Availability Zones" (docs.aws.amazon.com/global-infrastructure/latest/regions/),
 * whose display names give the city or, for some regions, only the country
 * or state. `GLOBAL` (CloudFront and other edge services) is not a place.
 */
import { at, type RegionTable } from './place.ts';

export const AWS_REGIONS: RegionTable = {
  'af-south-1': at('ZA', 'ZA-WC', 'Cape Town', -33.9249, 18.4241),
  'ap-east-1': at('HK', undefined, 'Hong Kong', 22.3193, 114.1694),
  'ap-east-2': at('TW', 'TW-TPE', 'Taipei', 25.033, 121.5654),
  'ap-northeast-1': at('JP', 'JP-13', 'Tokyo', 35.6762, 139.6503),
  'ap-northeast-2': at('KR', 'KR-11', 'Seoul', 37.5665, 126.978),
  'ap-northeast-3': at('JP', 'JP-27', 'Osaka', 34.6937, 135.5023),
  'ap-south-1': at('IN', 'IN-MH', 'Mumbai', 19.076, 72.8777),
  'ap-south-2': at('IN', 'IN-TS', 'Hyderabad', 17.385, 78.4867),
  'ap-southeast-1': at('SG', undefined, 'Singapore', 1.3521, 103.8198),
  'ap-southeast-2': at('AU', 'AU-NSW', 'Sydney', -33.8688, 151.2093),
  'ap-southeast-3': at('ID', 'ID-JK', 'Jakarta', -6.2088, 106.8456),
  'ap-southeast-4': at('AU', 'AU-VIC', 'Melbourne', -37.8136, 144.9631),
  'ap-southeast-5': at('MY'), // Asia Pacific (Malaysia)
  'ap-southeast-6': at('NZ', 'NZ-AUK', 'Auckland', -36.8485, 174.7633),
  'ap-southeast-7': at('TH'), // Asia Pacific (Thailand)
  'ca-central-1': at('CA', 'CA-QC', 'Montreal', 45.5017, -73.5673),
  'ca-west-1': at('CA', 'CA-AB', 'Calgary', 51.0447, -114.0719),
  'cn-north-1': at('CN', 'CN-BJ', 'Beijing', 39.9042, 116.4074),
  'cn-northwest-1': at('CN', 'CN-NX'), // China (Ningxia)
  'eu-central-1': at('DE', 'DE-HE', 'Frankfurt am Main', 50.1109, 8.6821),
  'eu-central-2': at('CH', 'CH-ZH', 'Zurich', 47.3769, 8.5417),
  'eu-north-1': at('SE', 'SE-AB', 'Stockholm', 59.3293, 18.0686),
  'eu-south-1': at('IT', 'IT-25', 'Milan', 45.4642, 9.19),
  'eu-south-2': at('ES', 'ES-AR'), // Europe (Spain), in Aragón
  'eu-west-1': at('IE'), // Europe (Ireland)
  'eu-west-2': at('GB', 'GB-ENG', 'London', 51.5074, -0.1278),
  'eu-west-3': at('FR', 'FR-IDF', 'Paris', 48.8566, 2.3522),
  'eusc-de-east-1': at('DE', 'DE-BB'), // AWS European Sovereign Cloud, Brandenburg
  'il-central-1': at('IL', 'IL-TA', 'Tel Aviv', 32.0853, 34.7818),
  'me-central-1': at('AE'), // Middle East (UAE)
  'me-south-1': at('BH'), // Middle East (Bahrain)
  'mx-central-1': at('MX', 'MX-QUE'), // Mexico (Central), in Querétaro
  'sa-east-1': at('BR', 'BR-SP', 'São Paulo', -23.5505, -46.6333),
  'sa-west-1': at('CL', 'CL-RM', 'Santiago', -33.4489, -70.6693),
  'us-east-1': at('US', 'US-VA'), // US East (N. Virginia)
  'us-east-2': at('US', 'US-OH'), // US East (Ohio)
  'us-gov-east-1': at('US'),
  'us-gov-west-1': at('US'),
  'us-south-1': at('US'),
  'us-west-1': at('US', 'US-CA'), // US West (N. California)
  'us-west-2': at('US', 'US-OR'), // US West (Oregon)
};
