import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { connectSolanaWalletRoute } from '../../api/routes/merchant-wallets/connect-solana.js';
import { connectEvmWalletRoute, connectTronWalletRoute } from '../../api/routes/merchant-wallets/connect-xpub.js';
import { connectWallet, disconnectWallet, railsOfSlot } from '../../services/wallets/merchant-wallets.js';
import { walletKeysOf, type WalletSlot } from '../../services/stores/stores.js';
import { accountPaths } from '../../domain/hd/xpub.js';
import { methodOfWalletSlot } from '../../rails/methods.js';
import { railFacts as rails } from '../../rails/registry.js';
import { attempt, noErrors, optionalText, parseApiBody, type FormErrors } from './forms.js';
import { can, sendPage, withAction, withSession } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { csrfField, dashboardPage, field, formError, notice } from './layout.js';
import type { DashboardSession } from './session.js';

interface Slot {
  title: string;
  /** The body field of the API route, which is also the form's field. */
  input: 'xpub' | 'address';
  route: typeof connectTronWalletRoute | typeof connectSolanaWalletRoute;
  hint: string;
}

const slots: Record<WalletSlot, Slot> = {
  tron: { title: 'TRON', input: 'xpub', route: connectTronWalletRoute, hint: `Account-level xpub at ${accountPaths.tron}` },
  evm: { title: 'EVM (BNB Smart Chain, Ethereum, Polygon)', input: 'xpub', route: connectEvmWalletRoute, hint: `Account-level xpub at ${accountPaths.evm}` },
  solana: { title: 'Solana', input: 'address', route: connectSolanaWalletRoute, hint: 'Your wallet (owner) address, not a token account' },
};
const slotIds = Object.keys(slots) as WalletSlot[];
const isSlot = (s: string): s is WalletSlot => (slotIds as string[]).includes(s);

/** How many receive addresses a page shows for the merchant to compare with their wallet. */
const shownAddresses = 5;

/** What the merchant compares with their wallet: the receive address at index 0, or the wallet address itself. */
function firstAddressOf(slot: WalletSlot, key: string): { address: string; path: string | null } {
  const first = methodOfWalletSlot(slot).walletKey.receiveAddresses(key, 0, 1)[0];
  return first ? { address: first.address, path: first.path } : { address: key, path: null };
}

/** The next few receive addresses after the first (indexes 1 … 4), as the wallet lists them; none for an address key. */
const nextAddressesOf = (slot: WalletSlot, key: string) => methodOfWalletSlot(slot).walletKey.receiveAddresses(key, 1, shownAddresses - 1);

function slotCard(session: DashboardSession, slot: WalletSlot, key: string | null, errors: FormErrors): SafeHtml {
  const s = slots[slot];
  const first = key ? firstAddressOf(slot, key) : null;
  const railNames = railsOfSlot(slot).map((r) => rails[r].displayName).join(', ');
  return html`<section class="card" id="wallet-${slot}" data-wallet="${slot}">
<div class="row"><h2>${s.title}</h2><span class="status ${first ? 'status-confirmed' : 'status-expired'}">${first ? 'Connected' : 'Not connected'}</span></div>
<p class="muted">Enables ${railNames}.</p>
${first
    ? html`<dl class="facts"><dt>First address</dt><dd><code data-testid="first-address-${slot}">${first.address}</code>
<button type="button" class="copy" data-copy="${first.address}">Copy</button></dd>
${first.path ? html`<dt>Path</dt><dd><code>${first.path}</code></dd>` : ''}</dl>
${key && s.input === 'xpub' ? html`<details class="more-addresses"><summary>The next ${shownAddresses - 1} addresses</summary>
<ol start="1" class="addresses" data-testid="next-addresses-${slot}">${nextAddressesOf(slot, key).map(
        (a) => html`<li><small>${a.path}</small> <code>${a.address}</code></li>`,
      )}</ol></details>` : ''}
<p class="muted">${s.input === 'address' ? 'Payments go to this wallet, found by their Solana Pay reference.' : 'Your wallet shows this address first on this account: if it does not, you exported the wrong key.'}</p>`
    : ''}
${can(session, 'owner') ? html`${formError(errors)}
<form method="post" action="/dashboard/wallets/${slot}" novalidate>
${csrfField(session)}
${field({ name: s.input, label: first ? `Replace the ${s.input === 'xpub' ? 'xpub' : 'address'}` : s.input === 'xpub' ? 'Extended public key (xpub…)' : 'Wallet address', errors, hint: s.hint, required: true })}
<button type="submit" class="primary">${first ? 'Replace' : 'Register'}</button>
</form>
${first
    ? html`<form method="post" action="/dashboard/wallets/${slot}/disconnect" class="inline" data-confirm="Disconnect the ${s.title} wallet? New links will stop offering it.">
${csrfField(session)}<button type="submit" class="danger">Disconnect</button></form>`
    : ''}` : html`<p class="muted">Only an owner can register or change where payments go.</p>`}
</section>`;
}

async function render(deps: ApiDeps, session: DashboardSession, banner: SafeHtml, errorsOf: Partial<Record<WalletSlot, FormErrors>> = {}): Promise<string> {
  const keys = await walletKeysOf(deps, session.auth);
  const body = html`${banner}
<p class="muted">Malipo only ever sees public keys: addresses are derived from them, and only your wallet can move the funds.</p>
${slotIds.map((slot) => slotCard(session, slot, keys[slot], errorsOf[slot] ?? noErrors))}`;
  return dashboardPage(session, 'wallets', 'Wallets', body);
}

function bannerFor(query: Record<string, unknown>): SafeHtml {
  const connected = typeof query.connected === 'string' && isSlot(query.connected) ? query.connected : null;
  const disconnected = typeof query.disconnected === 'string' && isSlot(query.disconnected) ? query.disconnected : null;
  if (connected) return notice('ok', `${slots[connected].title} wallet registered. Check its first address below against your wallet.`);
  if (disconnected) return notice('ok', `${slots[disconnected].title} wallet disconnected. Links already created keep their addresses.`);
  return html``;
}

export function registerWalletsPage(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    '/wallets',
    withSession(deps, async (session, request, reply) => sendPage(reply, 200, await render(deps, session, bannerFor(request.query as Record<string, unknown>)))),
  );

  app.post(
    '/wallets/:slot',
    withAction(deps, async (session, form, request, reply) => {
      const { slot } = request.params as { slot: string };
      if (!isSlot(slot)) return reply.callNotFound();
      const { input, route } = slots[slot];
      const result = await attempt(async () => {
        const body = parseApiBody(route.body!, { [input]: optionalText(form, input) }) as Record<string, string>;
        return connectWallet(deps.pool, session.auth, session.auth.storeId, slot, body[input]!);
      }, [input]);
      if (result.ok) return reply.redirect(`/dashboard/wallets?connected=${slot}`, 303);
      return sendPage(reply, result.status, await render(deps, session, html``, { [slot]: result.errors }));
    }, { role: 'owner' }),
  );

  app.post(
    '/wallets/:slot/disconnect',
    withAction(deps, async (session, _form, request, reply) => {
      const { slot } = request.params as { slot: string };
      if (!isSlot(slot)) return reply.callNotFound();
      const result = await attempt(() => disconnectWallet(deps.pool, session.auth, session.auth.storeId, slot), []);
      if (result.ok) return reply.redirect(`/dashboard/wallets?disconnected=${slot}`, 303);
      return sendPage(reply, result.status, await render(deps, session, html``, { [slot]: result.errors }));
    }, { role: 'owner' }),
  );
}
