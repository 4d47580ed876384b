// The dashboard works without JavaScript; this only adds copy buttons and a confirmation
// before a wallet is disconnected or an API key is revoked.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  navigator.clipboard.writeText(button.getAttribute('data-copy')).then(
    () => {
      button.textContent = 'Copied';
      setTimeout(() => (button.textContent = 'Copy'), 1500);
    },
    () => {
      button.textContent = 'Select and copy';
    },
  );
});

document.addEventListener('submit', (event) => {
  const form = event.target;
  const question = form instanceof HTMLFormElement ? form.getAttribute('data-confirm') : null;
  if (question && !window.confirm(question)) event.preventDefault();
});
