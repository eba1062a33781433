import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { redirectUriMatches } from '../../src/oauth/redirect-match.ts';

describe('redirectUriMatches', () => {
  it('matches a registered URI exactly', () => {
    assert.equal(redirectUriMatches(['https://app.example/cb'], 'https://app.example/cb'), true);
    assert.equal(redirectUriMatches(['https://app.example/cb'], 'https://app.example/cb/'), false);
    assert.equal(redirectUriMatches(['https://app.example/cb'], 'https://APP.example/cb'), false);
  });

  it('lets a loopback IP literal over http differ in its port only', () => {
    const v4 = ['http://127.0.0.1/callback'];
    for (const port of ['1', '8080', '49152', '65535'])
      assert.equal(redirectUriMatches(v4, `http://127.0.0.1:${port}/callback`), true, port);
    assert.equal(redirectUriMatches(['http://127.0.0.1:8000/cb?x=1'], 'http://127.0.0.1:9/cb?x=1'), true);
    assert.equal(redirectUriMatches(['http://127.0.0.1:8000/cb?x=1'], 'http://127.0.0.1/cb?x=1'), true);
    assert.equal(redirectUriMatches(['http://[::1]/cb'], 'http://[::1]:53682/cb'), true);
  });

  it('keeps everything but the port exact on loopback', () => {
    const v4 = ['http://127.0.0.1/callback'];
    for (const uri of [
      'http://127.0.0.1:8080/callback/',
      'http://127.0.0.1:8080/Callback',
      'http://127.0.0.1:8080/callback?x=1',
      'https://127.0.0.1:8080/callback',
      'http://[::1]:8080/callback',
      'http://127.0.0.2:8080/callback',
      'http://127.0.0.1.evil.example:8080/callback',
      'http://127.0.0.1:8080@evil.example/callback',
      'http://127.0.0.1:/callback',
      'http://127.0.0.1:0/callback',
      'http://127.0.0.1:08080/callback',
      'http://127.0.0.1:65536/callback',
      'http://127.0.0.1:99999/callback',
      'http://127.0.0.1:8080/callback/../callback',
    ])
      assert.equal(redirectUriMatches(v4, uri), false, uri);
  });

  it('gives no port freedom to other hosts, localhost among them', () => {
    assert.equal(redirectUriMatches(['https://app.example/cb'], 'https://app.example:8443/cb'), false);
    assert.equal(redirectUriMatches(['http://localhost/cb'], 'http://localhost:9999/cb'), false);
    assert.equal(redirectUriMatches(['http://localhost:8000/cb'], 'http://localhost:8000/cb'), true);
  });
});
