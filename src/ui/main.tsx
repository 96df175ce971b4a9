import { createRoot } from 'react-dom/client';

createRoot(document.getElementById('root')!).render(<p>Shuttle Studio is starting…</p>);
