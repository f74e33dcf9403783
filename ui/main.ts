/** The dashboard's entry: a hash router over the views. */
import { api, errorBox } from './api.js';
import { h, replace } from './dom.js';
import { parseRoute } from './route.js';
import { appView } from './views/app.js';
import { composerView } from './views/composer.js';
import { listView } from './views/list.js';
import { logsView } from './views/logs.js';

const main = document.getElementById('main') as HTMLElement;
let cleanup: () => void = () => undefined;

function show(): void {
  cleanup();
  const route = parseRoute(location.hash);
  for (const link of document.querySelectorAll('header nav a')) {
    const view = link.getAttribute('data-view');
    if (view === route.view) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const view = h('div');
  replace(main, view);
  cleanup =
    route.view === 'app'
      ? appView(view, route)
      : route.view === 'logs'
        ? logsView(view, route)
        : route.view === 'new'
          ? composerView(view)
          : listView(view, route);
  main.focus({ preventScroll: true });
}

/** Logout: the server ends the session and clears its cookie; the page stops asking the API. */
async function logout(): Promise<void> {
  try {
    await api.logout();
  } catch (error) {
    replace(main, errorBox(error));
    return;
  }
  cleanup();
  cleanup = () => undefined;
  removeEventListener('hashchange', show);
  replace(main, h('p', { role: 'status' }, 'Logged out. To come back, open a new link (txs ui prints one).'));
}

document.getElementById('logout')?.addEventListener('click', () => void logout());
addEventListener('hashchange', show);
show();
