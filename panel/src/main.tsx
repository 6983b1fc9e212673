import { render } from 'preact';
import { App } from './app.js';
import './styles.css';
import 'uplot/dist/uPlot.min.css';

render(<App />, document.getElementById('app')!);

// The shell works offline once loaded (docs/panel.md § Offline): the worker caches it, never /v1 answers.
if ('serviceWorker' in navigator && window.isSecureContext) {
  navigator.serviceWorker.register('control-center-sw.js').catch(() => undefined);
}
