import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  plugins: [react()],
  // The engine worker is a module worker (it imports Shuttle's ES modules).
  worker: { format: 'es' },
});
