// The interactive reference's own two files, around Swagger UI's build: the page, titled for tokend with its
// icon, and the script that starts Swagger UI on the document's public address with tokend's logo.
import { html, type Html } from '../web/html.ts';
import { FAVICON_SVG } from '../web/theme.ts';

/** Swagger UI's files the page loads, as @fastify/swagger-ui ships them, with their types. */
export const SWAGGER_UI_FILES: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
};

/** The page at `docs`, whose files are under `{docs}/static/`. */
export function referencePage(docs: string): Html {
  const files = `${docs}/static`;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>API reference · tokend</title>
        <link rel="stylesheet" type="text/css" href="${files}/swagger-ui.css" />
        <link rel="stylesheet" type="text/css" href="${files}/index.css" />
        <link rel="icon" type="image/svg+xml" href="${files}/theme/favicon.svg" sizes="any" />
      </head>
      <body>
        <div id="swagger-ui"></div>
        <script src="${files}/swagger-ui-bundle.js" charset="utf-8"></script>
        <script src="${files}/swagger-ui-standalone-preset.js" charset="utf-8"></script>
        <script src="${files}/swagger-initializer.js" charset="utf-8"></script>
      </body>
    </html>`;
}

/** The top bar's logo: the pages' icon and the name, white on the bar's dark grey. */
const LOGO_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="150" height="40" viewBox="0 0 150 40">' +
  FAVICON_SVG.replace('<svg ', '<svg x="4" y="4" ') +
  '<text x="46" y="28" fill="#fff" font-family="system-ui,sans-serif" font-size="24" font-weight="600">' +
  'tokend</text></svg>';

/**
 * The script that starts Swagger UI. Its top bar lists one document, `documentPath`, the public address
 * (`urls` names it in the bar), and shows tokend's logo in place of Swagger's once the bar is drawn.
 */
export function swaggerInitializer(documentPath: string): string {
  const config = {
    deepLinking: true,
    docExpansion: 'list',
    urls: [{ url: documentPath, name: `tokend v1 (${documentPath})` }],
  };
  const logo = `data:image/svg+xml;base64,${Buffer.from(LOGO_SVG).toString('base64')}`;
  return `window.onload = function () {
  const config = ${JSON.stringify(config)}
  SwaggerUIBundle(Object.assign({
    dom_id: '#swagger-ui',
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout',
    validatorUrl: null,
  }, config));
  function placeLogo() {
    const link = document.querySelector('#swagger-ui .topbar .topbar-wrapper > a.link');
    if (!link) return false;
    const img = document.createElement('img');
    img.height = 40;
    img.alt = 'tokend';
    img.src = ${JSON.stringify(logo)};
    link.replaceChildren(img);
    return true;
  }
  if (!placeLogo())
    new MutationObserver(function (_changes, observer) {
      if (placeLogo()) observer.disconnect();
    }).observe(document.body, { childList: true, subtree: true });
};
`;
}
