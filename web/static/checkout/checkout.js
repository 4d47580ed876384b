// The hosted checkout. One render function draws the page from the checkout state; the state
// comes inline with the page and then from GET /v1/checkout/:id every 4 seconds (the spec's
// recommended interval). No framework, no build step: the page must load fast on a phone.
(function () {
  'use strict';
  var root = document.getElementById('checkout');
  var state = JSON.parse(document.getElementById('checkout-state').textContent);
  var selected = null;
  var etag = null;
  var promptSent = false;
  var pollMs = 4000;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === 'text') node.textContent = attrs[k];
      else if (k.slice(0, 2) === 'on') node.addEventListener(k.slice(2), attrs[k]);
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
    return node;
  }

  function kes(amount) {
    return 'KES ' + Number(amount).toLocaleString('en-KE');
  }

  function amountFor(rail) {
    return rail.network === 'MOBILE_MONEY' ? kes(state.mobileMoneyAmount) : state.usdtAmount + ' USDT';
  }

  // A link paid by M-Pesa was paid in shillings, whichever rail the customer had picked before.
  function headlineAmount() {
    if (state.status === 'CONFIRMED' && state.confirmedRail === 'MOBILE_MONEY') return kes(state.mobileMoneyAmount);
    return selected ? amountFor(selected) : state.usdtAmount + ' USDT';
  }

  function header() {
    return el('div', {}, [
      state.environment === 'test' ? el('span', { class: 'badge', text: 'Test mode: no real money moves' }) : null,
      el('h1', { text: 'Pay ' + state.storeName }),
      state.description ? el('div', { class: 'muted', text: state.description }) : null,
      el('div', { class: 'amount', 'data-testid': 'amount', text: headlineAmount() }),
      el('div', { class: 'muted', text: 'Expires ' + new Date(state.expiresAt).toLocaleString() }),
    ]);
  }

  function railButton(rail) {
    return el('button', {
      class: 'rail', type: 'button', 'aria-pressed': String(selected === rail), 'data-rail': rail.network,
      onclick: function () { selected = rail; render(); },
    }, [
      el('img', { src: rail.chainLogoUrl, alt: '' }),
      el('span', {}, [document.createTextNode(rail.displayName), el('small', { text: rail.tokenStandard || 'M-Pesa prompt' })]),
    ]);
  }

  function copyButton(text) {
    return el('button', {
      class: 'copy', type: 'button', text: 'Copy',
      onclick: function (e) {
        if (navigator.clipboard) navigator.clipboard.writeText(text);
        e.target.textContent = 'Copied';
      },
    });
  }

  function simulatedOnlyPanel(rail) {
    return el('div', { class: 'pay' }, [
      el('div', { class: 'notice', 'data-testid': 'simulated-only', text: 'Test mode: ' + rail.displayName + ' has no test token configured, so it is simulated only. The merchant pays this link with simulate-payment; nothing sent on this network is detected.' }),
    ]);
  }

  function cryptoPanel(rail) {
    if (rail.simulatedOnly) return simulatedOnlyPanel(rail);
    var isSol = rail.network === 'USDT_SOL';
    return el('div', { class: 'pay' }, [
      el('div', { class: 'muted', text: 'Send exactly ' + state.usdtAmount + ' USDT (' + rail.tokenStandard + ') to this address. Other tokens or networks are not detected.' }),
      rail.qrUrl ? el('img', { class: 'qr', src: rail.qrUrl, alt: 'QR code of the payment address' }) : null,
      el('div', { class: 'address' }, [el('code', { 'data-testid': 'address', text: rail.address }), copyButton(rail.address)]),
      isSol ? el('a', { class: 'primary', href: rail.payUri, text: 'Open in a Solana wallet' }) : null,
      isSol ? el('div', { class: 'muted', text: 'Pay with a Solana Pay wallet (Phantom, Solflare) so the payment is recognised.' }) : null,
      el('div', { class: 'muted', text: 'Network fee about $' + rail.estimatedFeeUsd + '. Confirmed in about ' + Math.round(rail.estimatedConfirmationSeconds) + ' s.' }),
    ]);
  }

  function mobilePanel() {
    var error = el('div', { class: 'error', role: 'alert' });
    var input = el('input', { type: 'tel', id: 'phone', name: 'phone', inputmode: 'numeric', placeholder: '2547XXXXXXXX', autocomplete: 'tel' });
    var button = el('button', { class: 'primary', type: 'submit', text: promptSent ? 'Prompt sent: check your phone' : 'Send M-Pesa prompt' });
    if (promptSent) button.disabled = true;
    var form = el('form', {
      onsubmit: function (e) {
        e.preventDefault();
        var phone = input.value.replace(/[\s+]/g, '').replace(/^0/, '254');
        if (!/^254\d{9}$/.test(phone)) { error.textContent = 'Enter your M-Pesa number as 2547XXXXXXXX (12 digits).'; return; }
        button.disabled = true;
        error.textContent = '';
        fetch('/v1/checkout/' + state.id + '/pay/mobile-money', {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ phoneNumber: phone }),
        }).then(function (res) {
          return res.json().then(function (body) {
            if (res.ok) { promptSent = true; render(); poll(); return; }
            button.disabled = false;
            error.textContent = (body && body.error && body.error.message) || 'The prompt could not be sent. Try again.';
          });
        }).catch(function () { button.disabled = false; error.textContent = 'Network problem. Try again.'; });
      },
    }, [
      el('label', { for: 'phone', text: 'M-Pesa phone number' }),
      input, button, error,
      el('div', { class: 'muted', text: 'Paybill ' + (state.mobileMoneyShortcode || '') + '. Enter your M-Pesa PIN on your phone when asked.' }),
    ]);
    return el('div', { class: 'pay' }, [form]);
  }

  function finalState() {
    var paid = state.status === 'CONFIRMED';
    var text = paid ? 'Payment received' : state.status === 'EXPIRED' ? 'This payment link has expired' : 'This payment link was cancelled';
    return el('div', { class: 'state ' + (paid ? 'ok' : ''), 'data-testid': 'final-state' }, [
      el('div', { class: 'big', text: text }),
      paid && state.confirmedRail === 'MOBILE_MONEY' ? el('div', { 'data-testid': 'paid-amount', text: 'Paid ' + kes(state.mobileMoneyAmount) + ' by M-Pesa' }) : null,
      paid && state.mobileMoneyReceipt ? el('div', { 'data-testid': 'receipt', text: 'M-Pesa receipt ' + state.mobileMoneyReceipt }) : null,
      paid ? el('div', { class: 'muted', text: 'Thank you. ' + state.storeName + ' has been notified.' }) : el('div', { class: 'muted', text: 'Ask the merchant for a new link.' }),
      state.redirectUrl ? el('a', { class: 'primary', href: state.redirectUrl, text: 'Back to ' + state.storeName }) : null,
    ]);
  }

  function render() {
    if (selected) selected = state.rails.filter(function (r) { return r.network === selected.network; })[0] || null;
    var body;
    if (state.status === 'CONFIRMED' || state.status === 'EXPIRED' || state.status === 'CANCELLED') body = finalState();
    else {
      var processing = state.status === 'PROCESSING'
        ? el('div', { class: 'state', 'data-testid': 'processing' }, [el('div', { class: 'big', text: 'Payment in progress…' }), el('div', { class: 'muted', text: 'Keep this page open; it updates by itself.' })])
        : null;
      var received = state.amountReceived !== '0' ? el('div', { class: 'notice', text: 'Received ' + state.amountReceived + ' USDT so far.' }) : null;
      body = el('div', {}, [
        processing, received,
        el('div', { class: 'rails', role: 'group', 'aria-label': 'Payment method' }, state.rails.map(railButton)),
        selected ? (selected.network === 'MOBILE_MONEY' ? mobilePanel() : cryptoPanel(selected)) : el('div', { class: 'muted', text: 'Choose how you want to pay.' }),
      ]);
    }
    root.replaceChildren(header(), body);
  }

  function poll() {
    clearTimeout(poll.timer);
    if (state.status === 'CONFIRMED' || state.status === 'EXPIRED' || state.status === 'CANCELLED') return;
    poll.timer = setTimeout(function () {
      fetch('/v1/checkout/' + state.id, { headers: etag ? { 'if-none-match': etag } : {} })
        .then(function (res) {
          if (res.status === 200) {
            etag = res.headers.get('etag');
            return res.json().then(function (next) {
              if (next.status === 'PENDING' && state.status === 'PROCESSING') promptSent = false;
              state = next;
              render();
            });
          }
        })
        .catch(function () {})
        .then(poll);
    }, pollMs);
  }

  if (state.rails.length === 1) selected = state.rails[0];
  render();
  poll();
})();
