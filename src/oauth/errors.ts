// OAuth 2.0 errors, one class per error code of RFC 6749 §4.1.2.1 / §5.2, RFC 7009 and RFC 6750.
// Each knows its HTTP status at the token, revocation and introspection endpoints.

export abstract class OAuthError extends Error {
  /** the `error` member: an RFC 6749 error code */
  abstract readonly error: string;
  /** HTTP status at the token, revocation and introspection endpoints */
  readonly status: number = 400;
  /** whether `message` may be shown to the caller as `error_description` */
  readonly expose: boolean = true;
}

export class InvalidRequest extends OAuthError {
  readonly error = 'invalid_request';
}

/** Client authentication failed: unknown client, wrong secret, or no authentication where one is needed. */
export class InvalidClient extends OAuthError {
  readonly error = 'invalid_client';
  override readonly status = 401;
}

/** The code or refresh token is invalid, expired, used, or was issued to another client or redirect URI. */
export class InvalidGrant extends OAuthError {
  readonly error = 'invalid_grant';
}

/** RFC 6749 §5.2: the client may not use this grant (a public client asking for client credentials). */
export class UnauthorizedClient extends OAuthError {
  readonly error = 'unauthorized_client';
}

export class UnsupportedGrantType extends OAuthError {
  readonly error = 'unsupported_grant_type';
}

export class UnsupportedResponseType extends OAuthError {
  readonly error = 'unsupported_response_type';
}

export class InvalidScope extends OAuthError {
  readonly error = 'invalid_scope';
}

/**
 * The user (or the server on the user's behalf) refused the authorization request; at the token endpoint,
 * a device code the user denied (RFC 8628 §3.5).
 */
export class AccessDenied extends OAuthError {
  readonly error = 'access_denied';
}

/** OpenID Connect Core §3.1.2.6, answered to prompt=none: the user must sign in (again). */
export class LoginRequired extends OAuthError {
  readonly error = 'login_required';
}

/** OpenID Connect Core §3.1.2.6, answered to prompt=none: the user has not approved these scopes. */
export class ConsentRequired extends OAuthError {
  readonly error = 'consent_required';
}

/** OpenID Connect Core §3.1.2.6: request objects (`request`) are not supported. */
export class RequestNotSupported extends OAuthError {
  readonly error = 'request_not_supported';
}

/** OpenID Connect Core §3.1.2.6: `request_uri` is not supported. */
export class RequestUriNotSupported extends OAuthError {
  readonly error = 'request_uri_not_supported';
}

/** OpenID Connect Core §3.1.2.6: the `registration` parameter is not supported. */
export class RegistrationNotSupported extends OAuthError {
  readonly error = 'registration_not_supported';
}

/** RFC 8628 §3.5: the user has not decided on the device code yet; poll again after the interval. */
export class AuthorizationPending extends OAuthError {
  readonly error = 'authorization_pending';
}

/** RFC 8628 §3.5: the device code expired; start again. */
export class ExpiredToken extends OAuthError {
  readonly error = 'expired_token';
}

/**
 * RFC 8628 §3.5: the device polled before its interval was up; the interval is now `interval` seconds
 * (HTTP 400, as every RFC 6749 §5.2 error; the token endpoint's rate limit is SlowDown, 429).
 */
export class PollingTooFast extends OAuthError {
  readonly error = 'slow_down';
  readonly intervalS: number;
  constructor(message: string, intervalS: number) {
    super(message);
    this.intervalS = intervalS;
  }
}

/**
 * Too many token requests for one user, or for one user with one application (src/oauth/token-limits.ts):
 * RFC 8628's `slow_down`, registered for the token endpoint, with HTTP 429 and `Retry-After`.
 */
export class SlowDown extends OAuthError {
  readonly error = 'slow_down';
  override readonly status = 429;
  /** seconds until a request may be counted again (the Retry-After header) */
  readonly retryAfterS: number;
  constructor(message: string, retryAfterS: number) {
    super(message);
    this.retryAfterS = retryAfterS;
  }
}

export class ServerError extends OAuthError {
  readonly error = 'server_error';
  override readonly status = 500;
  override readonly expose = false;
}

/** What the caller sees: RFC 6749 §5.2's body. An unexposed message becomes a generic one. */
export function errorBody(err: OAuthError): { error: string; error_description: string } {
  return {
    error: err.error,
    error_description: err.expose ? err.message : 'An internal error occurred. Please try again later.',
  };
}
