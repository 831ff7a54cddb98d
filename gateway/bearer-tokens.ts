// Who is calling: the bearer token of a request, compared with every configured one in constant time, and the
// principal it belongs to. Only the tokens' digests are kept.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { GatewayToken } from './gateway-config';
import { HttpError } from './http-answers';

/** Who is calling: the token's principal, and the key its event streams are counted under (the token's digest). */
export interface Caller {
  principal: string;
  admin: boolean;
  key: string;
}

/** A configured token, by its digest. */
interface Grant {
  digest: Buffer;
  principal: string;
  admin: boolean;
}

export class BearerTokens {
  private readonly grants: Grant[];

  constructor(tokens: readonly GatewayToken[]) {
    this.grants = tokens.map(({ token, principal, admin }) => ({ digest: sha256(token), principal, admin }));
    if (this.grants.length === 0) throw new Error('startGateway: give `token` or `tokens` (no token, no access)');
  }

  /**
   * Checks the bearer token; returns whose it is. Every configured token is compared (in constant time, digest with
   * digest), so how long a refusal takes says nothing about which token came close.
   */
  authenticate(req: IncomingMessage): Caller {
    const header = req.headers.authorization;
    const challenge = { 'www-authenticate': 'Bearer realm="gateway"' };
    if (!header) throw new HttpError(401, 'unauthenticated', 'Send Authorization: Bearer <token>.', challenge);
    const token = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    const digest = sha256(token ?? '');
    let match: Grant | undefined;
    for (const grant of this.grants) {
      if (timingSafeEqual(digest, grant.digest) && !match) match = grant;
    }
    if (!token || !match) throw new HttpError(401, 'unauthenticated', 'The bearer token is not valid.', challenge);
    return { principal: match.principal, admin: match.admin, key: match.digest.toString('hex') };
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
