// Pick a protocol by name. Both translators are pure, so workflow and worker use the same code.
import { legacyXmlProtocol } from './legacy-xml';
import { nativeProtocol } from './native';
import type { Protocol, ProtocolName } from './types';

const protocols: Record<ProtocolName, Protocol> = { native: nativeProtocol, 'legacy-xml': legacyXmlProtocol };

export function protocolFor(name: ProtocolName): Protocol {
  return protocols[name];
}
